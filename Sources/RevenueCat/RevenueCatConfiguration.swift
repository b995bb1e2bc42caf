import Foundation

/// How the RevenueCat client reaches the v1 REST API and how hard it tries.
///
/// The API key is a secret: `description` never shows it.
public struct RevenueCatConfiguration: Sendable, CustomStringConvertible {
    /// Base URL without the `/v1` suffix, e.g. `https://api.revenuecat.com`.
    public var baseURL: String
    /// Secret (server-side) v1 API key, sent as `Authorization: Bearer <key>`.
    public var apiKey: String
    /// Time one HTTP attempt (head and body) may take.
    public var requestTimeout: Duration
    /// Total attempts per user, first try included (at least 1).
    public var maxAttempts: Int
    /// First backoff ceiling for 5xx, network errors and timeouts; doubles per attempt, full jitter.
    public var baseBackoff: Duration
    /// Upper bound of one exponential backoff.
    public var maxBackoff: Duration
    /// Upper bound of one wait asked for by a 429 (`backoff_ms` or `Retry-After`).
    public var max429Wait: Duration
    /// Largest response body accepted.
    public var maxBodyBytes: Int

    public static let defaultBaseURL = "https://api.revenuecat.com"

    public init(
        baseURL: String = RevenueCatConfiguration.defaultBaseURL, apiKey: String, requestTimeout: Duration = .seconds(10),
        maxAttempts: Int = 4, baseBackoff: Duration = .milliseconds(500), maxBackoff: Duration = .seconds(30),
        max429Wait: Duration = .seconds(60), maxBodyBytes: Int = 2 * 1024 * 1024
    ) {
        self.baseURL = baseURL
        self.apiKey = apiKey
        self.requestTimeout = requestTimeout
        self.maxAttempts = max(1, maxAttempts)
        self.baseBackoff = baseBackoff
        self.maxBackoff = maxBackoff
        self.max429Wait = max429Wait
        self.maxBodyBytes = maxBodyBytes
    }

    public var description: String {
        "RevenueCatConfiguration(baseURL: \(baseURL), apiKey: <redacted>, requestTimeout: \(requestTimeout), "
            + "maxAttempts: \(maxAttempts), baseBackoff: \(baseBackoff), maxBackoff: \(maxBackoff), "
            + "max429Wait: \(max429Wait), maxBodyBytes: \(maxBodyBytes))"
    }
}
