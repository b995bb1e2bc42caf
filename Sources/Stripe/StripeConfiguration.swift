import Foundation
import SourceHTTP

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
    /// Deadline, body limit, attempts and backoff (also for 429s: Stripe names no wait), and the bounds of 429 waits.
    public var requestPolicy: SourceRequestPolicy
    /// Most list pages read for one customer (100 subscriptions a page); more is a fetch error.
    public var maxPages: Int
    /// Most pages of `GET /v1/events` (100 events a page) the store feed reads over one window; more is a feed
    /// error (the feed is reported failed, never read in part).
    public var maxEventPages: Int
    /// Most pages of `GET /v1/subscriptions?status=…` (100 subscriptions a page) the inventory reads per status
    /// (CONTRACT "Which users a run asks about"); more fails the inventory (never used in part).
    public var maxInventoryPages: Int

    public static let defaultBaseURL = "https://api.stripe.com"
    /// The API version subrecon's wire types follow (item-level `current_period_end`; older layouts still decode).
    public static let pinnedAPIVersion = "2025-03-31.basil"

    public init(
        baseURL: String = StripeConfiguration.defaultBaseURL, apiKey: String,
        apiVersion: String = StripeConfiguration.pinnedAPIVersion, requestPolicy: SourceRequestPolicy = SourceRequestPolicy(),
        maxPages: Int = 20, maxEventPages: Int = 1000, maxInventoryPages: Int = 1000
    ) {
        self.baseURL = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
        self.apiKey = apiKey
        self.apiVersion = apiVersion
        self.requestPolicy = requestPolicy
        self.maxPages = max(1, maxPages)
        self.maxEventPages = max(1, maxEventPages)
        self.maxInventoryPages = max(1, maxInventoryPages)
    }

    public var description: String {
        "StripeConfiguration(baseURL: \(baseURL), apiKey: <redacted>, apiVersion: \(apiVersion), "
            + "requestPolicy: \(requestPolicy), maxPages: \(maxPages), maxEventPages: \(maxEventPages), maxInventoryPages: \(maxInventoryPages))"
    }
}
