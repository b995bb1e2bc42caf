import Foundation
import SubreconCore
import SubreconTestKit

/// Inputs shaped so that the premise of a property holds often (a property whose premise rarely holds
/// proves little). Each is built from the generic `Input(seed:)`, then made decidable or given the shape a rule is about.
extension Input {
    /// The mapped products, by tier.
    static let mapped = ["premium_monthly", "pro_monthly", "pro_annual", "lifetime"]

    /// Every purchase, entitlement and source answer stated well enough for `decide` to conclude: no error, a known
    /// subscriber, every entitlement naming a product, every product mapped, every environment, kind and end stated,
    /// a start beside every refund, no "active" state after the stated end. `decide` must not skip such a user.
    static func decidable(seed: UInt64) -> Input {
        var input = Input(seed: seed)
        var g = SeededRandom(seed: seed ^ 0x5EED_DEC1_DAB1_E000)
        input.facts.errors = []
        input.facts.revenueCatKnowsSubscriber = true
        input.facts.revenueCatEntitlements = input.facts.revenueCatEntitlements.map { entitlement in
            var named = entitlement
            if named.productID == nil { named.productID = g.pick(mapped) }
            if named.expires == .unstated { named.expires = .never }
            return named
        }
        input.facts.revenueCatPurchases = input.facts.revenueCatPurchases.map { stated($0, &g) }
        input.facts.stores = input.facts.stores.map { fact in
            var stated = fact
            stated.purchase = Input.stated(fact.purchase, &g)
            return stated
        }
        return input
    }

    /// The purchase with every fact `judge` needs stated (values chosen by `g` where one was missing).
    private static func stated(_ purchase: PurchaseFact, _ g: inout SeededRandom) -> PurchaseFact {
        var p = purchase
        if !mapped.contains(p.productID) { p.productID = g.pick(mapped) }
        if p.isSandbox == nil { p.isSandbox = false }
        if p.kind == .unstated { p.kind = g.pick([.subscription, .nonRenewing, .nonExpiring]) }
        if p.kind != .nonExpiring && p.expiresDate == nil { p.expiresDate = T.addingTimeInterval(Double(g.int(-60...60)) * 86_400) }
        if let refunded = p.refundedAt, p.purchaseDate == nil {
            p.purchaseDate = refunded.addingTimeInterval(-Double(g.int(0...40)) * 86_400)
        }
        if p.storeState == .active, let end = p.expiresDate, end <= T { p.storeState = nil }
        return p
    }

    /// A decidable input in which one purchase is in billing grace at T: its period ended, its stated grace has not,
    /// and nothing else about it (refund, revocation, pause, sandbox) ends it.
    static func inGrace(seed: UInt64) -> (input: Input, purchase: PurchaseFact) {
        var input = decidable(seed: seed)
        var g = SeededRandom(seed: seed ^ 0x6A6A_CE00)
        var p = PurchaseFact(
            origin: .revenueCat, productID: g.pick(mapped.filter { $0 != "lifetime" }), store: g.pick([.appStore, .playStore, .stripe]),
            kind: .subscription, isSandbox: false, purchaseDate: T.addingTimeInterval(-Double(g.int(31...40)) * 86_400),
            expiresDate: T.addingTimeInterval(-Double(g.int(1...20)) * 86_400 - 0.5),
            gracePeriodExpiresDate: T.addingTimeInterval(Double(g.int(1...15)) * 86_400 + 0.25),
            billingIssueDetectedAt: g.chance(0.5) ? T.addingTimeInterval(-21 * 86_400) : nil, autoRenew: true,
            storeTransactionID: "grace", line: nil, buyer: .unstated)
        if g.chance(0.5) {
            p.origin = .appStore
            p.store = .appStore
            p.storeState = g.pick([nil, .billingRetry, .gracePeriod])
            p.originalTransactionID = "grace"
            input.facts.stores.append(StoreFact(lookupID: "grace", purchase: p))
        } else {
            input.facts.revenueCatPurchases.append(p)
        }
        return (input, p)
    }

    /// A decidable input plus one purchase that RevenueCat and its store both describe (same store, same id), with
    /// views that disagree on whether it entitles at T. Returns which view entitles.
    static func disputed(seed: UInt64) -> (input: Input, withoutRevenueCatView: Input, storeEntitles: Bool) {
        var input = decidable(seed: seed)
        var g = SeededRandom(seed: seed ^ 0xA070_0000)
        let storeEntitles = g.chance(0.5)
        let (store, origin): (StoreKind, FactOrigin) = g.pick([(.appStore, .appStore), (.stripe, .stripe), (.playStore, .googlePlay)])
        func view(_ origin: FactOrigin, entitles: Bool) -> PurchaseFact {
            let days = Double(entitles ? g.int(1...60) : -g.int(1...60))
            return PurchaseFact(
                origin: origin, productID: "pro_annual", store: store, kind: .subscription, isSandbox: false,
                purchaseDate: T.addingTimeInterval(-90 * 86_400 + 0.25), expiresDate: T.addingTimeInterval(days * 86_400 + 0.5),
                autoRenew: g.pick([true, false]), originalTransactionID: "disputed", storeTransactionID: "disputed", line: nil,
                buyer: .unstated)
        }
        // No other RevenueCat purchase of that store may pass for the same one (Stripe and Google match by product too).
        input.facts.revenueCatPurchases = input.facts.revenueCatPurchases.map { purchase in
            var other = purchase
            if other.store == store && other.productID == "pro_annual" { other.productID = "pro_monthly" }
            return other
        }
        let rcView = view(.revenueCat, entitles: !storeEntitles)
        let storeView = view(origin, entitles: storeEntitles)
        var without = input
        without.facts.stores.append(StoreFact(lookupID: "disputed", purchase: storeView))
        input.facts.revenueCatPurchases.append(rcView)
        input.facts.stores.append(StoreFact(lookupID: "disputed", purchase: storeView))
        return (input, without, storeEntitles)
    }
}
