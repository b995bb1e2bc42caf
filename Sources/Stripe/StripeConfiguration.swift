import Foundation

/// How the Stripe client reaches the API and how hard it tries.
///
/// The API key (secret `sk_…` or restricted `rk_…` with read access to subscriptions) is a secret: `description`
/// never shows it.
public struct StripeConfiguration: Sendable, CustomStringConvertible {
    /// Base URL without `/v1`, e.g. `https://api.stripe.com`.
    public var baseURL: String
    /// Sent as `Authorization: Bearer <key>`.
    public var apiKey: String
    /// The `Stripe-Version` every request pins, so the answer's layout does not follow the account's default.
    public var apiVersion: String
    /// Time one HTTP attempt (head and body) may take.
    public var requestTimeout: Duration
    /// Attempts per lookup for 5xx, network errors and timeouts, first try included (at least 1). 429 answers do
    /// not count: they are bounded by `rateLimitBudget`.
    public var maxAttempts: Int
    /// First backoff ceiling for 5xx, network errors, timeouts and 429s (Stripe names no wait); doubles, full jitter.
    public var baseBackoff: Duration
    public var maxBackoff: Duration
    /// Longest single 429 wait.
    public var max429Wait: Duration
    /// Total time one lookup may spend waiting on 429s before the user is given up for this run.
    public var rateLimitBudget: Duration
    /// Largest response body accepted.
    public var maxBodyBytes: Int
    /// Most list pages read for one customer (100 subscriptions a page); more is a fetch error.
    public var maxPages: Int
    /// Most pages of `GET /v1/events` (100 events a page) the store feed reads over one window; more is a feed
    /// error (the feed is reported failed, never read in part).
    public var maxEventPages: Int

    public static let defaultBaseURL = "https://api.stripe.com"
    /// The API version subrecon's wire types follow (item-level `current_period_end`; older layouts still decode).
    public static let pinnedAPIVersion = "2025-03-31.basil"

    public init(
        baseURL: String = StripeConfiguration.defaultBaseURL, apiKey: String,
        apiVersion: String = StripeConfiguration.pinnedAPIVersion, requestTimeout: Duration = .seconds(10),
        maxAttempts: Int = 4, baseBackoff: Duration = .milliseconds(500), maxBackoff: Duration = .seconds(30),
        max429Wait: Duration = .seconds(60), rateLimitBudget: Duration = .seconds(300), maxBodyBytes: Int = 4 * 1024 * 1024,
        maxPages: Int = 20, maxEventPages: Int = 1000
    ) {
        self.baseURL = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
        self.apiKey = apiKey
        self.apiVersion = apiVersion
        self.requestTimeout = requestTimeout
        self.maxAttempts = max(1, maxAttempts)
        self.baseBackoff = baseBackoff
        self.maxBackoff = maxBackoff
        self.max429Wait = max429Wait
        self.rateLimitBudget = rateLimitBudget
        self.maxBodyBytes = maxBodyBytes
        self.maxPages = max(1, maxPages)
        self.maxEventPages = max(1, maxEventPages)
    }

    public var description: String {
        "StripeConfiguration(baseURL: \(baseURL), apiKey: <redacted>, apiVersion: \(apiVersion), "
            + "requestTimeout: \(requestTimeout), maxAttempts: \(maxAttempts), baseBackoff: \(baseBackoff), "
            + "maxBackoff: \(maxBackoff), max429Wait: \(max429Wait), rateLimitBudget: \(rateLimitBudget), "
            + "maxBodyBytes: \(maxBodyBytes), maxPages: \(maxPages), maxEventPages: \(maxEventPages))"
    }
}
