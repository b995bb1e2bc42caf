import Foundation
import Logging
import RevenueCat
import SubreconApp
import SubreconCore
import SubreconDatabase
import SubreconJob
import SubreconPorts
import Testing

@Suite("Configuration from the environment (CONTRACT 'Environment'): one line naming the variable, exit 78, no secrets")
struct ConfigurationTests {
    let base = ["DATABASE_URL": "postgres://app:s3cret-pw@127.0.0.1:5432/app?sslmode=disable", "REVENUECAT_API_KEY": "sk_live_abc123"]

    func failure(_ env: [String: String], requireSource: Bool = true) -> ConfigError? {
        do {
            _ = try SubreconConfiguration.load(ProcessEnvironment(env), requireSource: requireSource)
            return nil
        } catch {
            return error
        }
    }

    @Test("a complete RevenueCat-only configuration loads and hides its secrets")
    func complete() throws {
        let config = try SubreconConfiguration.load(ProcessEnvironment(base), requireSource: true)
        #expect(config.appStore == nil)
        #expect(config.environment == .production)
        #expect(!config.description.contains("s3cret-pw") && !config.description.contains("sk_live_abc123"))
    }

    @Test("the receipt bridge: APPLE_SHARED_SECRET (or _FILE) switches it on, the URL alone is an error, no secret shown")
    func receiptBridge() throws {
        #expect(try SubreconConfiguration.load(ProcessEnvironment(base), requireSource: true).receipts == nil)
        var env = base
        env["APPLE_VERIFY_RECEIPT_URL"] = "http://127.0.0.1:9/verifyReceipt"
        #expect(failure(env)?.variable == "APPLE_SHARED_SECRET")
        env["APPLE_SHARED_SECRET"] = "feedface0shared0secret"
        #expect(failure(env)?.variable == "APP_STORE_BUNDLE_ID", "a receipt is believed only for the app's own bundle id")
        env["APP_STORE_BUNDLE_ID"] = "com.example.app"
        let config = try SubreconConfiguration.load(ProcessEnvironment(env), requireSource: true)
        #expect(config.appStore == nil, "the bundle id alone serves the receipt bridge, not the App Store Server API")
        #expect(config.description.contains("bundleID: com.example.app"))
        #expect(config.receipts != nil)
        #expect(
            config.description.contains("production: http://127.0.0.1:9/verifyReceipt, sandbox: http://127.0.0.1:9/verifyReceipt"),
            "one URL serves both")
        #expect(!config.description.contains("feedface0shared0secret"))
        env["APPLE_VERIFY_RECEIPT_URL"] = nil
        let defaults = try SubreconConfiguration.load(ProcessEnvironment(env), requireSource: true)
        #expect(
            defaults.description.contains(
                "production: https://buy.itunes.apple.com/verifyReceipt, sandbox: https://sandbox.itunes.apple.com/verifyReceipt"))
        env["APPLE_VERIFY_RECEIPT_URL"] = "ftp://nowhere"
        #expect(failure(env)?.variable == "APPLE_VERIFY_RECEIPT_URL")
    }

    @Test("missing RevenueCat key for run names the variable")
    func missingKey() {
        var env = base
        env["REVENUECAT_API_KEY"] = nil
        #expect(failure(env)?.variable == "REVENUECAT_API_KEY")
        #expect(failure(env, requireSource: false) == nil, "migrate needs no key")
    }

    @Test("secrets may come from NAME_FILE; both set, or an unreadable file, is an error")
    func secretFiles() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("rc-key-\(UUID().uuidString)")
        try Data("sk_from_file\n".utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        var env = base
        env["REVENUECAT_API_KEY"] = nil
        env["REVENUECAT_API_KEY_FILE"] = file.path
        let config = try SubreconConfiguration.load(ProcessEnvironment(env), requireSource: true)
        #expect(config.revenueCat?.apiKey == "sk_from_file")
        env["REVENUECAT_API_KEY"] = "sk_too"
        #expect(failure(env)?.variable == "REVENUECAT_API_KEY_FILE")
        env["REVENUECAT_API_KEY"] = nil
        env["REVENUECAT_API_KEY_FILE"] = "/nonexistent/key"
        #expect(failure(env)?.variable == "REVENUECAT_API_KEY_FILE")
    }

    @Test(
        "malformed settings name their variable and never echo a password",
        arguments: [
            ("DATABASE_URL", "mysql://u:s3cret-pw@h/db"),
            ("DATABASE_URL", "postgres://u:s3cret-pw@h:notaport/db"),
            ("REVENUECAT_BASE_URL", "not a url"),
            ("APP_STORE_ENVIRONMENT", "staging"),
            ("SUBRECON_HTTP_TIMEOUT_SECONDS", "-1"),
        ])
    func malformed(name: String, value: String) {
        var env = base
        env[name] = value
        let error = failure(env)
        #expect(error?.variable == name)
        #expect(error?.description.contains("s3cret-pw") == false)
    }

    @Test("a partial App Store configuration names the first missing variable")
    func partialApple() {
        var env = base
        env["APP_STORE_ISSUER_ID"] = "issuer"
        #expect(failure(env)?.variable == "APP_STORE_KEY_ID")
        env["APP_STORE_KEY_ID"] = "KEY"
        env["APP_STORE_PRIVATE_KEY"] = "-----BEGIN PRIVATE KEY-----\nnot a key\n-----END PRIVATE KEY-----"
        env["APP_STORE_BUNDLE_ID"] = "com.example"
        let error = failure(env)
        #expect(error?.variable == "APP_STORE_PRIVATE_KEY")
        #expect(error?.description.contains("not a key") == false)
    }

    @Test("an unreachable database at start is exit 69 before anything is done")
    func unreachable() async throws {
        var env = base
        env["DATABASE_URL"] = "postgres://u:s3cret-pw@127.0.0.1:1/db?sslmode=disable"
        do {
            _ = try await Commands.run(
                environment: ProcessEnvironment(env),
                options: RunOptions(asOf: Date(), reportDirectory: URL(fileURLWithPath: "/tmp/unused")),
                logger: Logger(label: "test"))
            Issue.record("expected a failure")
        } catch let failure as CommandFailure {
            #expect(failure.status == .unavailable)
            #expect(!failure.description.contains("s3cret-pw"))
        }
        #expect(!FileManager.default.fileExists(atPath: "/tmp/unused"))
    }
}
