import SubreconCore
import SubreconJob

/// Every store subrecon knows, in the order they are asked after RevenueCat. **Adding a store: one line here** (its
/// adapter, a `StoreSource`, declares everything else: its name, `users` column, request budget and flag,
/// environment, feed). See docs/ARCHITECTURE.md, "Where to add a store".
public enum StoreRegistry {
    public static let stores: [any StoreSource.Type] = [
        AppStoreSource.self,
        GooglePlaySource.self,
        StripeSource.self,
    ]

    /// The stores' identifier columns in `users`, in registry order (the database reads them into
    /// `UserRow.identifiers`).
    public static var identifierColumns: [IdentifierColumn] { stores.flatMap { $0.identifierColumns } }

    /// The candidate reasons the stores' feeds give, in registry order.
    public static var feedReasons: [CandidateReason] { stores.compactMap { $0.feedReason } }

    /// The production default of `origin`'s request budget, as its adapter declares it (0 when none is registered).
    public static func defaultRequestsPerSecond(_ origin: FactOrigin) -> Double {
        store(origin)?.defaultRequestsPerSecond(.production) ?? 0
    }

    /// The adapter of `origin`, when one is registered.
    public static func store(_ origin: FactOrigin) -> (any StoreSource.Type)? {
        stores.first { $0.origin == origin }
    }
}
