import Foundation
import SourceHTTP
import Testing

@testable import RevenueCat

@Suite("RevenueCat configuration and paths")
struct RevenueCatConfigurationTests {
    @Test("the configuration's description never shows the API key")
    func redaction() {
        let configuration = RevenueCatConfiguration(apiKey: "sk_live_TOPSECRET")
        #expect(!configuration.description.contains("TOPSECRET"))
        #expect(configuration.description.contains("api.revenuecat.com"))
        #expect(configuration.requestPolicy.maxAttempts == 4)
        #expect(configuration.requestPolicy.requestTimeout == .seconds(10))
    }

    @Test("user ids are percent-encoded as one path segment")
    func pathEncoding() {
        #expect(RevenueCatClient.subscriberPath(for: "$RCAnonymousID:abc") == "/v1/subscribers/%24RCAnonymousID%3Aabc")
        #expect(RevenueCatClient.subscriberPath(for: "a/b c") == "/v1/subscribers/a%2Fb%20c")
        #expect(RevenueCatClient.subscriberPath(for: "plain-id_1.2~x") == "/v1/subscribers/plain-id_1.2~x")
        #expect(RevenueCatClient.subscriberPath(for: "é?#&") == "/v1/subscribers/%C3%A9%3F%23%26")
    }
}
