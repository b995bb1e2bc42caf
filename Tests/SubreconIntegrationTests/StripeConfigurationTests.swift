import Foundation
import SubreconApp
import SubreconCore
import SubreconJob
import SubreconTestSupport
import Testing

/// How Stripe is configured (docs/CONTRACT.md, "Environment"): a base URL without a key is an error naming the key,
/// and the key never reaches an error's text.
@Suite("Stripe's configuration")
struct StripeConfigurationTests {
    @Test("STRIPE_BASE_URL without STRIPE_API_KEY is a configuration error naming STRIPE_API_KEY")
    func configuration() throws {
        let env = ProcessEnvironment(["DATABASE_URL": "postgres://u@127.0.0.1:1/db", "STRIPE_BASE_URL": "http://127.0.0.1:9"])
        #expect(throws: ConfigError.self) { try SubreconConfiguration.load(env, requireSource: true) }
        do {
            _ = try SubreconConfiguration.load(env, requireSource: false)
            Issue.record("loaded")
        } catch {
            #expect(error.description.contains("STRIPE_API_KEY"))
        }
        let alone = try SubreconConfiguration.load(
            ProcessEnvironment(["DATABASE_URL": "postgres://u@127.0.0.1:1/db", "STRIPE_API_KEY": StripeWorld.key]), requireSource: true)
        #expect(alone.hasSource && alone.stripe != nil && alone.description.contains("baseURL: https://api.stripe.com"))
        #expect(!alone.description.contains(StripeWorld.key))

        let file = FileManager.default.temporaryDirectory.appendingPathComponent("stripe-key-\(UUID().uuidString)")
        try Data((StripeWorld.key + "\n").utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let fromFile = try SubreconConfiguration.load(
            ProcessEnvironment([
                "DATABASE_URL": "postgres://u@127.0.0.1:1/db", "STRIPE_API_KEY_FILE": file.path, "STRIPE_BASE_URL": "http://127.0.0.1:9/",
            ]),
            requireSource: true)
        #expect(fromFile.stripe != nil && fromFile.description.contains("baseURL: http://127.0.0.1:9,"))
        #expect(!fromFile.description.contains(StripeWorld.key))
    }
}
