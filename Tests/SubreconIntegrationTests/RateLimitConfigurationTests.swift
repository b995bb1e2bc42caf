import AppStore
import Crypto
import Foundation
import RevenueCat
import SourceHTTP
import Stripe
import SubreconApp
import SubreconJob
import SubreconPorts
import Testing

@Suite("429 caps from the environment: SUBRECON_HTTP_MAX_429_WAIT_SECONDS and SUBRECON_HTTP_429_BUDGET_SECONDS")
struct RateLimitConfigurationTests {
    let base = [
        "DATABASE_URL": "postgres://app:pw@127.0.0.1:5432/app", "REVENUECAT_API_KEY": "sk_live_abc123",
        "APP_STORE_ISSUER_ID": "issuer", "APP_STORE_KEY_ID": "KEY1", "APP_STORE_BUNDLE_ID": "com.example.app",
        "APP_STORE_PRIVATE_KEY": P256.Signing.PrivateKey().pemRepresentation,
    ]

    @Test("defaults: a single 429 wait above 60 s gives the user up; a lookup may wait 300 s in all on 429s")
    func defaults() throws {
        let config = try SubreconConfiguration.load(ProcessEnvironment(base), requireSource: true)
        #expect(
            config.revenueCat?.requestPolicy.maxRateLimitWait == .seconds(60)
                && config.revenueCat?.requestPolicy.rateLimitBudget == .seconds(300))
        #expect(
            config.appStore?.requestPolicy.maxRateLimitWait == .seconds(60)
                && config.appStore?.requestPolicy.rateLimitBudget == .seconds(300))
    }

    @Test("every configured source takes the same SUBRECON_HTTP_* values, and keeps its own body limit")
    func configured() throws {
        var env = base
        env["SUBRECON_HTTP_MAX_429_WAIT_SECONDS"] = "12.5"
        env["SUBRECON_HTTP_429_BUDGET_SECONDS"] = "90"
        env["SUBRECON_HTTP_TIMEOUT_SECONDS"] = "7"
        env["SUBRECON_HTTP_MAX_ATTEMPTS"] = "2"
        env["SUBRECON_HTTP_BACKOFF_SECONDS"] = "0.25"
        env["STRIPE_API_KEY"] = "sk_test_abc"
        env["APPLE_SHARED_SECRET"] = "shared"
        let config = try SubreconConfiguration.load(ProcessEnvironment(env), requireSource: true)
        let expected = SourceRequestPolicy(
            requestTimeout: .seconds(7), maxAttempts: 2, baseBackoff: .milliseconds(250), maxRateLimitWait: .milliseconds(12_500),
            rateLimitBudget: .seconds(90))
        let policies: [(String, SourceRequestPolicy?, Int)] = [
            ("revenuecat", config.revenueCat?.requestPolicy, RevenueCatConfiguration.defaultMaxBodyBytes),
            ("app_store", config.appStore?.requestPolicy, AppStoreConfiguration.defaultMaxBodyBytes),
            ("receipts", config.receipts?.requestPolicy, ReceiptVerifierConfiguration.defaultMaxBodyBytes),
            ("stripe", config.stripe?.requestPolicy, expected.maxBodyBytes),
        ]
        for (name, policy, bodyLimit) in policies {
            #expect(policy == expected.limitingBodies(to: bodyLimit), "\(name)")
        }
    }

    @Test(
        "a malformed or out-of-range value is a configuration error naming the variable",
        arguments: [
            ("SUBRECON_HTTP_MAX_429_WAIT_SECONDS", "inf"), ("SUBRECON_HTTP_MAX_429_WAIT_SECONDS", "-1"),
            ("SUBRECON_HTTP_MAX_429_WAIT_SECONDS", "3601"), ("SUBRECON_HTTP_429_BUDGET_SECONDS", "nan"),
            ("SUBRECON_HTTP_429_BUDGET_SECONDS", "1e19"), ("SUBRECON_HTTP_429_BUDGET_SECONDS", "soon"),
        ])
    func invalid(variable: String, value: String) {
        var env = base
        env[variable] = value
        do {
            _ = try SubreconConfiguration.load(ProcessEnvironment(env), requireSource: true)
            Issue.record("\(variable)=\(value) must be refused")
        } catch {
            #expect(error.variable == variable)
        }
    }
}
