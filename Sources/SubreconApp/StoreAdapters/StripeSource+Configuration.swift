import Foundation
import SourceHTTP
import Stripe
import SubreconCore
import SubreconJob

extension StripeSource {
    static var origin: FactOrigin { .stripe }
    static var identifierColumns: [IdentifierColumn] {
        [IdentifierColumn(origin: .stripe, name: "stripe_customer_id", label: "stripe", showsValue: true)]
    }
    static var rateOption: String { "stripe" }
    /// Stripe allows 25/s per endpoint (100/s live overall); 20 leaves room for the app's own calls.
    static func defaultRequestsPerSecond(_ environment: StoreEnvironment) -> Double { 20 }
    static var variables: String { "STRIPE_API_KEY" }
    /// Named by a Stripe event.
    static let eventReason = CandidateReason.feed("stripe_event")
    static var feedReason: CandidateReason? { eventReason }

    static func load(
        _ env: ProcessEnvironment, policy: SourceRequestPolicy, environment: StoreEnvironment
    ) throws(ConfigError) -> StripeConfiguration? {
        try stripeConfiguration(env, policy: policy)
    }

    /// Stripe from `STRIPE_API_KEY` (or `_FILE`) and `STRIPE_BASE_URL`; nil when neither is set.
    static func stripeConfiguration(
        _ env: ProcessEnvironment, policy: SourceRequestPolicy
    ) throws(ConfigError) -> StripeConfiguration? {
        let base = try env.baseURL("STRIPE_BASE_URL", default: nil)
        guard let key = try env.secret("STRIPE_API_KEY") else {
            if base != nil { throw ConfigError("STRIPE_API_KEY", "is not set (STRIPE_BASE_URL is; or STRIPE_API_KEY_FILE)") }
            return nil
        }
        return StripeConfiguration(
            baseURL: base ?? StripeConfiguration.defaultBaseURL, apiKey: key, requestPolicy: policy)
    }

}
