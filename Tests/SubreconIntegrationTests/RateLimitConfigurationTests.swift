import AppStore
import Crypto
import Foundation
import RevenueCat
import Subrecon
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
        #expect(config.revenueCat?.max429Wait == .seconds(60) && config.revenueCat?.rateLimitBudget == .seconds(300))
        #expect(config.appStore?.maxRateLimitWait == .seconds(60) && config.appStore?.rateLimitBudget == .seconds(300))
    }

    @Test("both sources take the configured values")
    func configured() throws {
        var env = base
        env["SUBRECON_HTTP_MAX_429_WAIT_SECONDS"] = "12.5"
        env["SUBRECON_HTTP_429_BUDGET_SECONDS"] = "90"
        let config = try SubreconConfiguration.load(ProcessEnvironment(env), requireSource: true)
        #expect(config.revenueCat?.max429Wait == .milliseconds(12_500) && config.revenueCat?.rateLimitBudget == .seconds(90))
        #expect(config.appStore?.maxRateLimitWait == .milliseconds(12_500) && config.appStore?.rateLimitBudget == .seconds(90))
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
