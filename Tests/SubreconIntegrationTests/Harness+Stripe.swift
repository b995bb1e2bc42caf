import StoreSimulator
import SubreconDatabase
import SubreconTestSupport

extension Harness {
    /// A Stripe simulator and a harness configured with it (RevenueCat off unless asked), the products of
    /// `StripeWorld` in its catalog.
    static func withStripe(
        revenueCat: Bool = false, extra: [String: String] = [:], _ body: (Harness, StripeSimulator) async throws -> Void
    ) async throws {
        let stripe = StripeSimulator(apiKey: StripeWorld.key)
        var variables = StripeWorld.environment
        variables.merge(extra) { $1 }
        try await Harness.with(revenueCat: revenueCat, routes: [stripe], extra: variables) { h in
            try await h.db.catalog.upsertProducts(StripeWorld.products)
            try await body(h, stripe)
        }
    }
}
