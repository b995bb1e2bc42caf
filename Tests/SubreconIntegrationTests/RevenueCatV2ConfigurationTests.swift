import Foundation
import RevenueCat
import SubreconApp
import SubreconJob
import Testing

/// `REVENUECAT_V2_API_KEY` (or `_FILE`) and `REVENUECAT_PROJECT_ID` (CONTRACT "Environment"): optional, together, and
/// beside `REVENUECAT_API_KEY`; anything else is 78 naming the variables, never a value.
@Suite("RevenueCat API v2 configuration")
struct RevenueCatV2ConfigurationTests {
    let base = ["DATABASE_URL": "postgres://app:pw@127.0.0.1:5432/app", "REVENUECAT_API_KEY": "sk_live_v1secret"]

    func failure(_ env: [String: String]) -> ConfigError? {
        do {
            _ = try SubreconConfiguration.load(ProcessEnvironment(env), requireSource: true)
            return nil
        } catch {
            return error
        }
    }

    @Test("v1 alone loads as before: no v2")
    func v1Alone() throws {
        #expect(try SubreconConfiguration.load(ProcessEnvironment(base), requireSource: true).revenueCat?.v2 == nil)
    }

    @Test("both set: v2 at the same base URL, the key (or _FILE) hidden from the description")
    func both() throws {
        var env = base
        env["REVENUECAT_V2_API_KEY"] = "sk_v2_SECRETvalue"
        env["REVENUECAT_PROJECT_ID"] = "proj1ab2"
        env["REVENUECAT_BASE_URL"] = "http://127.0.0.1:9/"
        let config = try SubreconConfiguration.load(ProcessEnvironment(env), requireSource: true)
        let v2 = try #require(config.revenueCat?.v2)
        #expect(v2.projectID == "proj1ab2" && v2.baseURL == "http://127.0.0.1:9" && v2.apiKey == "sk_v2_SECRETvalue")
        #expect(!config.description.contains("sk_v2_SECRETvalue") && config.description.contains("proj1ab2"))
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("v2key-\(UUID().uuidString)")
        try Data("sk_v2_fromfile\n".utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        env["REVENUECAT_V2_API_KEY"] = nil
        env["REVENUECAT_V2_API_KEY_FILE"] = file.path
        #expect(try SubreconConfiguration.load(ProcessEnvironment(env), requireSource: true).revenueCat?.v2?.apiKey == "sk_v2_fromfile")
    }

    @Test("one without the other is 78 naming both; v2 without REVENUECAT_API_KEY names it; no value in the text")
    func refused() {
        var env = base
        env["REVENUECAT_V2_API_KEY"] = "sk_v2_SECRETvalue"
        let noProject = failure(env)
        #expect(noProject?.variable == "REVENUECAT_V2_API_KEY, REVENUECAT_PROJECT_ID")
        #expect(noProject.map { !String(describing: $0).contains("sk_v2_SECRETvalue") } == true)
        env["REVENUECAT_V2_API_KEY"] = nil
        env["REVENUECAT_PROJECT_ID"] = "proj1"
        #expect(failure(env)?.variable == "REVENUECAT_V2_API_KEY, REVENUECAT_PROJECT_ID")
        env["REVENUECAT_V2_API_KEY"] = "sk_v2_SECRETvalue"
        env["REVENUECAT_API_KEY"] = nil
        #expect(failure(env)?.variable == "REVENUECAT_API_KEY")
        #expect(failure(env)?.problem.contains("REVENUECAT_V2_API_KEY is") == true)
    }
}
