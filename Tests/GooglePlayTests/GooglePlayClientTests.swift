import Foundation
import GooglePlay
import StoreSimulator
import SubreconCore
import SubreconTestSupport
import Testing

@Suite("Google Play client over loopback against the simulator")
struct GooglePlayClientTests {
    static let active = SimulatedPlaySubscription.single(
        "SUBSCRIPTION_STATE_ACTIVE", product: "premium_monthly", start: day(-3), expiry: day(27))

    @Test("200: the token is fetched once (signature verified by the simulator) and the answer mapped")
    func success() async throws {
        try await PlayLoopback.run { loop in
            await loop.simulator.setPurchase(Self.active, token: "tok/with+odd=chars")
            await loop.simulator.setPurchase(Self.active, token: "tok-2")
            let facts = try await loop.client.storeFacts(token: "tok/with+odd=chars", productHint: nil).get()
            #expect(facts.count == 1)
            #expect(facts.first?.purchase.storeState == .active)
            #expect(facts.first?.purchase.renewalPrice == Money(amount: Decimal(string: "9.99")!, currency: "USD"))
            #expect(facts.first?.lookupID == "tok/with+odd=chars")
            _ = try await loop.client.storeFacts(token: "tok-2", productHint: nil).get()
            let counters = await loop.simulator.counters()
            #expect(counters.tokenRequests == 1)
            #expect(counters.tokensIssued == 1)
            #expect(counters.apiRequests == 2)
            #expect(counters.unauthorized == 0)
        }
    }

    @Test("404: absence, no facts and no error")
    func notFound() async throws {
        try await PlayLoopback.run { loop in
            let facts = try await loop.client.storeFacts(token: "unknown", productHint: "premium_monthly").get()
            #expect(facts.isEmpty)
        }
    }

    @Test("410: evidence the purchase expired, of the row's product")
    func gone() async throws {
        try await PlayLoopback.run { loop in
            await loop.simulator.setGone("old")
            let facts = try await loop.client.storeFacts(token: "old", productHint: "premium_monthly").get()
            #expect(facts.count == 1)
            #expect(facts.first?.purchase.storeState == .expired)
            #expect(facts.first?.purchase.productID == "premium_monthly")
        }
    }

    @Test("401 with an expired access token: refreshed once, then answered")
    func refreshOnce() async throws {
        try await PlayLoopback.run { loop in
            await loop.simulator.setPurchase(Self.active, token: "tok")
            _ = try await loop.client.storeFacts(token: "tok", productHint: nil).get()
            await loop.simulator.expireAccessTokens()
            let facts = try await loop.client.storeFacts(token: "tok", productHint: nil).get()
            #expect(facts.count == 1)
            let counters = await loop.simulator.counters()
            #expect(counters.tokensIssued == 2)
            #expect(counters.unauthorized == 1)
        }
    }

    @Test("401 twice: a fetch error after one refresh, no third token")
    func unauthorizedTwice() async throws {
        try await PlayLoopback.run { loop in
            await loop.simulator.setPurchase(Self.active, token: "tok")
            await loop.simulator.setFault(.status(401), token: "tok", times: 2)
            let result = await loop.client.storeFacts(token: "tok", productHint: nil)
            guard case .failure(let error) = result else {
                Issue.record("expected a failure, got \(result)")
                return
            }
            #expect(error.kind == .fetch)
            #expect(error.origin == .googlePlay)
            #expect(error.message.contains("401"))
            #expect(!error.message.contains("ya29"))
            let counters = await loop.simulator.counters()
            #expect(counters.tokensIssued == 2)
            #expect(counters.apiRequests == 2)
        }
    }

    @Test("a token endpoint that refuses the assertion is a fetch error naming the OAuth code, no secret")
    func tokenEndpointRefuses() async throws {
        try await PlayLoopback.run { loop in
            await loop.simulator.setTokenEndpointFault(status: 400, times: 1)
            let result = await loop.client.storeFacts(token: "tok", productHint: nil)
            guard case .failure(let error) = result else {
                Issue.record("expected a failure")
                return
            }
            #expect(error.message.contains("OAuth token endpoint"))
            #expect(error.message.contains("HTTP 400"))
            #expect(!error.message.contains("eyJ"))  // no assertion
        }
    }

    @Test("an assertion signed with another key is refused by the token endpoint: a fetch error, nothing asked")
    func wrongKey() async throws {
        let other = try GoogleTestServiceAccount.generate(tokenURI: "https://oauth2.googleapis.com/token")
        try await PlayLoopback.run(signingKeyPEM: other.privateKeyPEM) { loop in
            await loop.simulator.setPurchase(Self.active, token: "tok")
            let result = await loop.client.storeFacts(token: "tok", productHint: nil)
            guard case .failure(let error) = result else {
                Issue.record("expected a failure")
                return
            }
            #expect(error.message.contains("HTTP 400 (invalid_grant)"))
            let counters = await loop.simulator.counters()
            #expect(counters.assertionsRefused == 1 && counters.tokensIssued == 0 && counters.apiRequests == 0)
        }
    }

    @Test("429 then success: the Retry-After wait is honoured and the lookup answered")
    func rateLimitedThenSuccess() async throws {
        try await PlayLoopback.run { loop in
            await loop.simulator.setPurchase(Self.active, token: "tok")
            await loop.simulator.setFault(.rateLimited(retryAfter: "0"), token: "tok", times: 1)
            let facts = try await loop.client.storeFacts(token: "tok", productHint: nil).get()
            #expect(facts.count == 1)
            #expect(loop.observer.statuses.filter { $0 == 429 }.count == 1)
        }
    }

    @Test("a 429 asking for longer than the cap gives the user up for this run")
    func rateLimitedTooLong() async throws {
        try await PlayLoopback.run { loop in
            await loop.simulator.setFault(.rateLimited(retryAfter: "3600"), token: "tok")
            let result = await loop.client.storeFacts(token: "tok", productHint: nil)
            guard case .failure(let error) = result else {
                Issue.record("expected a failure")
                return
            }
            #expect(error.message.contains("429"))
        }
    }

    @Test("500 on every attempt: retried, then a fetch error; 500 once: answered")
    func serverErrors() async throws {
        try await PlayLoopback.run(maxAttempts: 3) { loop in
            await loop.simulator.setPurchase(Self.active, token: "tok")
            await loop.simulator.setFault(.status(500), token: "bad")
            let result = await loop.client.storeFacts(token: "bad", productHint: nil)
            guard case .failure(let error) = result else {
                Issue.record("expected a failure")
                return
            }
            #expect(error.message.contains("gave up after 3 attempts"))
            #expect(error.message.contains("HTTP 500"))
            await loop.simulator.setFault(.status(503), token: "tok", times: 1)
            let facts = try await loop.client.storeFacts(token: "tok", productHint: nil).get()
            #expect(facts.count == 1)
        }
    }

    @Test("403 is a fetch error about permissions, not retried")
    func forbidden() async throws {
        try await PlayLoopback.run { loop in
            await loop.simulator.setFault(.status(403), token: "tok")
            let result = await loop.client.storeFacts(token: "tok", productHint: nil)
            guard case .failure(let error) = result else {
                Issue.record("expected a failure")
                return
            }
            #expect(error.message.contains("HTTP 403 (PERMISSION_DENIED)"))
            #expect(await loop.simulator.counters().apiRequests == 1)
        }
    }

    @Test("a malformed body, or an answer that cannot be judged, is a fetch error")
    func malformed() async throws {
        try await PlayLoopback.run { loop in
            await loop.simulator.setFault(.malformedJSON, token: "tok")
            let result = await loop.client.storeFacts(token: "tok", productHint: nil)
            guard case .failure(let error) = result else {
                Issue.record("expected a failure")
                return
            }
            #expect(error.message.contains("malformed"))
            await loop.simulator.setPurchase(
                .single("SUBSCRIPTION_STATE_UNSPECIFIED", product: "p", start: day(-1), expiry: day(1)), token: "odd")
            let odd = await loop.client.storeFacts(token: "odd", productHint: nil)
            guard case .failure(let oddError) = odd else {
                Issue.record("expected a failure")
                return
            }
            #expect(oddError.message.contains("SUBSCRIPTION_STATE_UNSPECIFIED"))
        }
    }

    @Test("a 404 for another package is a configuration error, not absence")
    func wrongPackage() async throws {
        try await PlayLoopback.run { loop in
            let body = Data(#"{"error":{"code":404,"message":"No application","errors":[{"reason":"applicationNotFound"}]}}"#.utf8)
            await loop.simulator.setFault(.raw(status: 404, headers: [:], body: body), token: "tok")
            let result = await loop.client.storeFacts(token: "tok", productHint: nil)
            guard case .failure(let error) = result else {
                Issue.record("expected a failure")
                return
            }
            #expect(error.message.contains("GOOGLE_PLAY_PACKAGE_NAME"))
        }
    }

    @Test("a body trickled past the deadline is a timeout, then a fetch error")
    func trickle() async throws {
        try await PlayLoopback.run(maxAttempts: 1, requestTimeout: .milliseconds(300)) { loop in
            await loop.simulator.setPurchase(Self.active, token: "tok")
            await loop.simulator.setFault(.trickle(pause: .milliseconds(50)), token: "tok")
            let result = await loop.client.storeFacts(token: "tok", productHint: nil)
            guard case .failure(let error) = result else {
                Issue.record("expected a failure")
                return
            }
            #expect(error.message.contains("timed out"))
        }
    }
}
