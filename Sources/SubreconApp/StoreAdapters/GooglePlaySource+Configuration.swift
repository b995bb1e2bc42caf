import Foundation
import GooglePlay
import SourceHTTP
import SubreconCore
import SubreconJob

extension GooglePlaySource {
    static var origin: FactOrigin { .googlePlay }
    static var identifierColumns: [IdentifierColumn] {
        [IdentifierColumn(origin: .googlePlay, name: "google_purchase_token", label: "google", showsValue: false)]
    }
    static var rateOption: String { "google-play" }
    /// CONTRACT "Commands": 10/s by default (Google's subscriptions bucket allows 3000 queries a minute, shared with the app's own
    /// calls).
    static func defaultRequestsPerSecond(_ environment: StoreEnvironment) -> Double { 10 }
    static var variables: String { "GOOGLE_PLAY_SERVICE_ACCOUNT + GOOGLE_PLAY_PACKAGE_NAME" }
    /// Named by Google Play's voided purchases.
    static let eventReason = CandidateReason.feed("google_voided")
    static var feedReason: CandidateReason? { eventReason }

    static func load(
        _ env: ProcessEnvironment, policy: SourceRequestPolicy, environment: StoreEnvironment
    ) throws(ConfigError) -> GooglePlayConfiguration? {
        try googlePlayConfiguration(env, policy: policy.limitingBodies(to: GooglePlayConfiguration.defaultMaxBodyBytes))
    }

    /// `GOOGLE_PLAY_SERVICE_ACCOUNT` (JSON key text, or `_FILE`) + `GOOGLE_PLAY_PACKAGE_NAME` (+ optional
    /// `GOOGLE_PLAY_BASE_URL`); nil when neither is set, a `ConfigError` naming the missing or unusable one otherwise.
    static func googlePlayConfiguration(
        _ env: ProcessEnvironment, policy: SourceRequestPolicy
    ) throws(ConfigError) -> GooglePlayConfiguration? {
        let key = try env.secret("GOOGLE_PLAY_SERVICE_ACCOUNT")
        let package = env.string("GOOGLE_PLAY_PACKAGE_NAME")
        let base = try env.baseURL("GOOGLE_PLAY_BASE_URL", default: nil)
        if key == nil && package == nil {
            if base != nil { throw ConfigError("GOOGLE_PLAY_SERVICE_ACCOUNT", "is not set (GOOGLE_PLAY_BASE_URL is)") }
            return nil
        }
        guard let key else {
            throw ConfigError(
                "GOOGLE_PLAY_SERVICE_ACCOUNT", "is not set (GOOGLE_PLAY_PACKAGE_NAME is; or GOOGLE_PLAY_SERVICE_ACCOUNT_FILE)")
        }
        guard let package else { throw ConfigError("GOOGLE_PLAY_PACKAGE_NAME", "is not set (GOOGLE_PLAY_SERVICE_ACCOUNT is)") }
        let account: GoogleServiceAccount
        do {
            account = try GoogleServiceAccount(json: key)
        } catch {
            throw ConfigError("GOOGLE_PLAY_SERVICE_ACCOUNT", "is not usable: \(error)")
        }
        do {
            return try GooglePlayConfiguration(
                serviceAccount: account, packageName: package, baseURL: base ?? GooglePlayConfiguration.defaultBaseURL,
                requestPolicy: policy)
        } catch {
            throw ConfigError("GOOGLE_PLAY_PACKAGE_NAME", "is not usable: \(error)")
        }
    }

}
