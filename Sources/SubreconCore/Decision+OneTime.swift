import Foundation

// One-time purchases and alternate product ids, resolved before purchases are judged.

extension Decision {
    /// RevenueCat's one-time purchases (`non_subscriptions`) with the kind their entitlements state (CONTRACT "Sources and the decision"): an
    /// entitlement naming the product with `expires_date: null` makes it non-expiring; with a date, the latest purchase
    /// of the product is a non-renewing pass ending then, and earlier ones ended no later (RevenueCat names the purchase
    /// with the furthest-out expiry). A product no entitlement names keeps an unstated kind, unless the entitlement the
    /// catalog maps it to has ended by `asOf` (then so has it); an unmapped one nobody names grants nothing (a consumable).
    static func resolvingOneTimePurchases(
        _ purchases: [PurchaseFact], entitlements: [EntitlementFact], catalog: ProductCatalog, asOf: Date
    ) -> [PurchaseFact] {
        var latestByProduct: [String: Int] = [:]
        for (index, purchase) in purchases.enumerated() where purchase.origin == .revenueCat && purchase.kind == .unstated {
            if let current = latestByProduct[purchase.productID],
                (purchases[current].purchaseDate ?? .distantPast) >= (purchase.purchaseDate ?? .distantPast)
            {
                continue
            }
            latestByProduct[purchase.productID] = index
        }
        var resolved: [PurchaseFact] = []
        for (index, purchase) in purchases.enumerated() {
            guard purchase.origin == .revenueCat, purchase.kind == .unstated else {
                resolved.append(purchase)
                continue
            }
            var fact = purchase
            fact.gracePeriodExpiresDate = nil  // a one-time purchase has no grace of its own; its entitlement's end bounds it
            let naming = entitlements.filter { $0.productID == purchase.productID }
            if naming.contains(where: { $0.expires == .never }) {
                fact.kind = .nonExpiring
            } else if !naming.isEmpty, !naming.contains(where: { $0.expires == .unstated }) {
                let end = naming.compactMap { entitlement -> Date? in
                    if case .at(let date) = entitlement.expires { return date }
                    return nil
                }.max()
                fact.kind = .nonRenewing
                let isLatest = latestByProduct[purchase.productID] == index
                fact.expiresDate = isLatest || (end.map { $0 <= asOf } ?? false) ? end : nil
            } else if naming.isEmpty {
                guard let entry = catalog.entry(for: purchase.productID) else { continue }  // grants nothing
                fact.expiresDate = nil
                if let name = entry.entitlement, let mapped = entitlements.first(where: { $0.identifier == name }),
                    case .at(let end) = mapped.expires, end <= asOf, mapped.gracePeriodExpiresDate.map({ $0 <= asOf }) ?? true
                {
                    fact.kind = .nonRenewing
                    fact.expiresDate = end
                }
            }
            resolved.append(fact)
        }
        return resolved
    }

    /// A purchase whose product id is not in `product_tiers` but one of its alternate ids is (Stripe: `prod_…`, else
    /// `price_…`) is judged under the mapped id.
    static func resolvingProductIDs(_ purchases: [PurchaseFact], catalog: ProductCatalog) -> [PurchaseFact] {
        purchases.map { purchase in
            guard catalog.entry(for: purchase.productID) == nil,
                let mapped = purchase.alternateProductIDs.first(where: { catalog.entry(for: $0) != nil })
            else { return purchase }
            var resolved = purchase
            resolved.productID = mapped
            return resolved
        }
    }
}
