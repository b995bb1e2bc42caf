import Foundation
import SourceHTTP

/// How the RevenueCat client reaches the v1 REST API and how hard it tries.
///
/// The API key is a secret: `description` never shows it.
public struct RevenueCatConfiguration: Sendable, CustomStringConvertible {
    /// Base URL without the `/v1` suffix, e.g. `https://api.revenuecat.com`.
    public var baseURL: String
    /// Secret (server-side) v1 API key, sent as `Authorization: Bearer <key>`.
    public var apiKey: String
    /// Deadline, body limit, attempts and backoff for 5xx, network errors and timeouts, and the bounds of 429 waits
    /// (`backoff_ms` or `Retry-After`; a longer asked wait gives the user up for this run, never a sleep that long).
    public var requestPolicy: SourceRequestPolicy
    /// API v2 beside the v1 key (`REVENUECAT_V2_API_KEY`, `REVENUECAT_PROJECT_ID`): asked first whether a user RevenueCat
    /// may not know exists, so that no night creates a customer; nil: v1 alone.
    public var v2: RevenueCatV2Configuration?

    public static let defaultBaseURL = "https://api.revenuecat.com"
    /// Largest response body accepted by default: a subscriber is a few kilobytes.
    public static let defaultMaxBodyBytes = 2 * 1024 * 1024

    public init(
        baseURL: String = RevenueCatConfiguration.defaultBaseURL, apiKey: String,
        requestPolicy: SourceRequestPolicy = SourceRequestPolicy(maxBodyBytes: RevenueCatConfiguration.defaultMaxBodyBytes)
    ) {
        self.baseURL = baseURL
        self.apiKey = apiKey
        self.requestPolicy = requestPolicy
    }

    public var description: String {
        let v2Text = v2.map { String(describing: $0) } ?? "none"
        return "RevenueCatConfiguration(baseURL: \(baseURL), apiKey: <redacted>, requestPolicy: \(requestPolicy), v2: \(v2Text))"
    }
}
