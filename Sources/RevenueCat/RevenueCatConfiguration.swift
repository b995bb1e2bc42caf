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
    /// Attempts per user for 5xx, network errors and timeouts, first try included (at least 1). 429 answers do not
    /// count: they are flow control, bounded by `max429Wait` and `rateLimitBudget`.
    public var maxAttempts: Int
    /// First backoff ceiling for 5xx, network errors and timeouts; doubles per attempt, full jitter.
    public var baseBackoff: Duration
    /// Upper bound of one exponential backoff.
    public var maxBackoff: Duration
    /// Longest wait a 429 may ask for (`backoff_ms` or `Retry-After`): a longer one gives the user up for this run
    /// (a fetch error saying the source asked for too long a wait), never a sleep that long.
    public var max429Wait: Duration
    /// Total time one lookup may spend waiting on 429s before the user is given up for this run.
    public var rateLimitBudget: Duration
    /// Largest response body accepted.
    public var maxBodyBytes: Int

    public static let defaultBaseURL = "https://api.revenuecat.com"

    public init(
        baseURL: String = RevenueCatConfiguration.defaultBaseURL, apiKey: String, requestTimeout: Duration = .seconds(10),
        maxAttempts: Int = 4, baseBackoff: Duration = .milliseconds(500), maxBackoff: Duration = .seconds(30),
        max429Wait: Duration = .seconds(60), maxBodyBytes: Int = 2 * 1024 * 1024, rateLimitBudget: Duration = .seconds(300)
    ) {
        self.baseURL = baseURL
        self.apiKey = apiKey
        self.requestTimeout = requestTimeout
        self.maxAttempts = max(1, maxAttempts)
        self.baseBackoff = baseBackoff
        self.maxBackoff = maxBackoff
        self.max429Wait = max429Wait
        self.rateLimitBudget = rateLimitBudget
        self.maxBodyBytes = maxBodyBytes
    }

    public var description: String {
        "RevenueCatConfiguration(baseURL: \(baseURL), apiKey: <redacted>, requestTimeout: \(requestTimeout), "
            + "maxAttempts: \(maxAttempts), baseBackoff: \(baseBackoff), maxBackoff: \(maxBackoff), "
            + "max429Wait: \(max429Wait), rateLimitBudget: \(rateLimitBudget), maxBodyBytes: \(maxBodyBytes))"
    }
}
