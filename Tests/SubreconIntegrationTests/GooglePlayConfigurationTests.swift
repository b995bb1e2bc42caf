import Foundation
import StoreSimulator
import SubreconCore
import SubreconPorts
import SubreconTestSupport
import Testing

@testable import SubreconApp
@testable import SubreconJob

/// Google Play's configuration: what a partial or unusable one says, and the budget option's default.
@Suite("Google Play configuration")
struct GooglePlayConfigurationTests {
    @Test("a partial or unusable Google Play configuration is one line naming the variable, without the key")
    func configuration() throws {
        let account = try GoogleTestServiceAccount.generate(tokenURI: "https://oauth2.googleapis.com/token")
        let base = ["DATABASE_URL": "postgres://app:pw@127.0.0.1:5432/app?sslmode=disable"]
        func failure(_ extra: [String: String]) -> ConfigError? {
            do {
                _ = try SubreconConfiguration.load(ProcessEnvironment(base.merging(extra) { $1 }), requireSource: true)
                return nil
            } catch {
                return error
            }
        }
        #expect(failure(["GOOGLE_PLAY_PACKAGE_NAME": GoogleWorld.package])?.variable == "GOOGLE_PLAY_SERVICE_ACCOUNT")
        #expect(failure(["GOOGLE_PLAY_SERVICE_ACCOUNT": account.json])?.variable == "GOOGLE_PLAY_PACKAGE_NAME")
        #expect(failure(["GOOGLE_PLAY_BASE_URL": "http://127.0.0.1:9"])?.variable == "GOOGLE_PLAY_SERVICE_ACCOUNT")
        let broken = account.json.replacingOccurrences(of: "service_account", with: "authorized_user")
        let error = try #require(failure(["GOOGLE_PLAY_SERVICE_ACCOUNT": broken, "GOOGLE_PLAY_PACKAGE_NAME": GoogleWorld.package]))
        #expect(error.variable == "GOOGLE_PLAY_SERVICE_ACCOUNT")
        #expect(!error.description.contains("PRIVATE KEY"))
        #expect(
            failure(["GOOGLE_PLAY_SERVICE_ACCOUNT": "{", "GOOGLE_PLAY_PACKAGE_NAME": GoogleWorld.package])?.variable
                == "GOOGLE_PLAY_SERVICE_ACCOUNT")
        #expect(failure([:])?.variable == "REVENUECAT_API_KEY", "no source at all is still refused")
        let config = try SubreconConfiguration.load(
            ProcessEnvironment(
                base.merging(["GOOGLE_PLAY_SERVICE_ACCOUNT": account.json, "GOOGLE_PLAY_PACKAGE_NAME": GoogleWorld.package]) { $1 }),
            requireSource: true)
        #expect(config.hasSource && config.revenueCat == nil)
        #expect(config.googlePlay != nil && config.description.contains(GoogleWorld.package))
        #expect(!config.description.contains("PRIVATE KEY"))
        // The key as a container secret file (`GOOGLE_PLAY_SERVICE_ACCOUNT_FILE`), as downloaded: trailing newline.
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("gp-key-\(UUID().uuidString).json")
        try Data((account.json + "\n").utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let fromFile = try SubreconConfiguration.load(
            ProcessEnvironment(
                base.merging(["GOOGLE_PLAY_SERVICE_ACCOUNT_FILE": file.path, "GOOGLE_PLAY_PACKAGE_NAME": GoogleWorld.package]) { $1 }),
            requireSource: true)
        #expect(fromFile.googlePlay != nil)
        #expect(
            failure([
                "GOOGLE_PLAY_SERVICE_ACCOUNT_FILE": file.path, "GOOGLE_PLAY_SERVICE_ACCOUNT": account.json,
                "GOOGLE_PLAY_PACKAGE_NAME": GoogleWorld.package,
            ])?
            .variable == "GOOGLE_PLAY_SERVICE_ACCOUNT_FILE")
    }

    @Test("--google-play-rps defaults to 10/s (CONTRACT 'Commands') and --resume carries it back to the resumed run")
    func storedBudget() throws {
        #expect(StoreRegistry.defaultRequestsPerSecond(.googlePlay) == 10)
        var original = RunOptions(asOf: Date(timeIntervalSince1970: 1_800_000_000), reportDirectory: URL(fileURLWithPath: "/tmp"))
        original.requestsPerSecond[.googlePlay] = 12
        let stored = try StoredSelection.decode(try StoredSelection(original).encoded())
        var resumed = RunOptions(asOf: Date(), reportDirectory: URL(fileURLWithPath: "/tmp"))
        try stored.apply(to: &resumed)
        #expect(resumed.requestsPerSecond[.googlePlay] == 12)
    }
}
