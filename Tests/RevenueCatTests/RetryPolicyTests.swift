import Testing

@testable import RevenueCat

@Suite("Retry waits and configuration")
struct RetryPolicyTests {
    @Test("the backoff ceiling doubles per failure and stops at the maximum")
    func ceiling() {
        let base = Duration.milliseconds(500)
        #expect(RetryPolicy.ceiling(failures: 1, base: base, max: .seconds(30)) == .milliseconds(500))
        #expect(RetryPolicy.ceiling(failures: 2, base: base, max: .seconds(30)) == .seconds(1))
        #expect(RetryPolicy.ceiling(failures: 4, base: base, max: .seconds(30)) == .seconds(4))
        #expect(RetryPolicy.ceiling(failures: 12, base: base, max: .seconds(30)) == .seconds(30))
        #expect(RetryPolicy.ceiling(failures: 500, base: base, max: .seconds(30)) == .seconds(30))
    }

    @Test("full jitter stays within zero and the ceiling")
    func jitter() {
        #expect(RetryPolicy.jittered(.seconds(4), unit: 0) == .zero)
        #expect(RetryPolicy.jittered(.seconds(4), unit: 0.5) == .seconds(2))
        #expect(RetryPolicy.jittered(.seconds(4), unit: 1) == .seconds(4))
        #expect(RetryPolicy.jittered(.seconds(4), unit: 7) == .seconds(4))
    }

    @Test("a 429 wait prefers backoff_ms, reads Retry-After as seconds or large values as ms, and is capped")
    func rateLimitWait() {
        let cap = Duration.seconds(60)
        #expect(RetryPolicy.rateLimitWait(backoffMS: 1500, retryAfter: "9", cap: cap) == .milliseconds(1500))
        #expect(RetryPolicy.rateLimitWait(backoffMS: nil, retryAfter: "9", cap: cap) == .seconds(9))
        #expect(RetryPolicy.rateLimitWait(backoffMS: nil, retryAfter: "2500", cap: cap) == .milliseconds(2500))
        #expect(RetryPolicy.rateLimitWait(backoffMS: nil, retryAfter: "120", cap: cap) == .seconds(60))
        #expect(RetryPolicy.rateLimitWait(backoffMS: 900_000, retryAfter: nil, cap: cap) == .seconds(60))
        #expect(RetryPolicy.rateLimitWait(backoffMS: nil, retryAfter: "Wed, 21 Oct 2015 07:28:00 GMT", cap: cap) == nil)
        #expect(RetryPolicy.rateLimitWait(backoffMS: nil, retryAfter: nil, cap: cap) == nil)
    }

    @Test("the configuration's description never shows the API key")
    func redaction() {
        let configuration = RevenueCatConfiguration(apiKey: "sk_live_TOPSECRET")
        #expect(!configuration.description.contains("TOPSECRET"))
        #expect(configuration.description.contains("api.revenuecat.com"))
        #expect(configuration.maxAttempts == 4)
        #expect(configuration.requestTimeout == .seconds(10))
    }

    @Test("user ids are percent-encoded as one path segment")
    func pathEncoding() {
        #expect(RevenueCatClient.subscriberPath(for: "$RCAnonymousID:abc") == "/v1/subscribers/%24RCAnonymousID%3Aabc")
        #expect(RevenueCatClient.subscriberPath(for: "a/b c") == "/v1/subscribers/a%2Fb%20c")
        #expect(RevenueCatClient.subscriberPath(for: "plain-id_1.2~x") == "/v1/subscribers/plain-id_1.2~x")
        #expect(RevenueCatClient.subscriberPath(for: "é?#&") == "/v1/subscribers/%C3%A9%3F%23%26")
    }
}
