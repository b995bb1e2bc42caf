import Foundation
import SubreconCore
import SubreconTestKit

/// One generated user: a row, what the sources said, and the instant.
struct Input {
    var row: UserRow
    var facts: SourceFacts
    var context: DecisionContext

    init(seed: UInt64) {
        var g = SeededRandom(seed: seed)
        let t = T
        func date(_ g: inout SeededRandom, _ chance: Double = 0.85) -> Date? {
            g.chance(chance) ? t.addingTimeInterval(Double(g.int(-90...90)) * 86_400 + Double(g.int(-2...2))) : nil
        }
        let statuses = ["none", "active", "canceled", "billing_issue", "expired", "refunded", "paused"]
        row = UserRow(
            id: "u", currentTier: g.int(0...2), status: statuses[g.int(0...statuses.count - 1)], endDate: date(&g),
            graceEndsAt: date(&g, 0.2), source: "apple_iap", productID: g.pick(DecisionPropertyTests.products),
            originalTransactionID: g.chance(0.3) ? "9" : nil, autoRenew: g.pick([true, false, nil]), updatedAtMicros: 1)
        var purchases: [PurchaseFact] = []
        for index in 0..<g.int(0...4) {
            let kind = g.pick(PurchaseKind.allCases)
            purchases.append(
                PurchaseFact(
                    origin: .revenueCat, productID: g.pick(DecisionPropertyTests.products),
                    store: g.pick([.appStore, .playStore, .stripe]),
                    kind: kind, isSandbox: g.pick([false, false, false, true, nil]), purchaseDate: date(&g),
                    expiresDate: kind == .nonExpiring ? nil : date(&g), gracePeriodExpiresDate: date(&g, 0.2),
                    refundedAt: date(&g, 0.15), billingIssueDetectedAt: date(&g, 0.2), autoRenew: g.pick([true, false, nil]),
                    isPaused: g.chance(0.1), storeTransactionID: "rc\(index)", line: nil, buyer: .unstated))
        }
        var apple: [StoreFact] = []
        for index in 0..<g.int(0...2) {
            let state = g.chance(0.7) ? g.pick(StoreState.allCases) : nil
            apple.append(
                StoreFact(
                    lookupID: "a\(index)",
                    purchase: PurchaseFact(
                        origin: .appStore, productID: g.pick(DecisionPropertyTests.products), store: .appStore,
                        kind: g.pick([.subscription, .subscription, .nonRenewing, .nonExpiring]), isSandbox: g.pick([false, true, nil]),
                        purchaseDate: date(&g), expiresDate: date(&g), gracePeriodExpiresDate: date(&g, 0.3),
                        refundedAt: date(&g, 0.1), autoRenew: g.pick([true, false, nil]), storeState: state,
                        // Sometimes a second transaction of the first line (a restore of a lifetime purchase).
                        originalTransactionID: index > 0 && g.chance(0.3) ? "a0" : "a\(index)", storeTransactionID: "a\(index)",
                        line: nil, buyer: .unstated)))
        }
        var entitlements: [EntitlementFact] = []
        for name in ["premium", "pro"] where g.chance(0.6) {
            let expires: StatedExpiry = g.chance(0.2) ? .never : (g.chance(0.1) ? .unstated : .at(date(&g, 1) ?? t))
            entitlements.append(
                EntitlementFact(
                    identifier: name, productID: g.chance(0.1) ? nil : g.pick(DecisionPropertyTests.products), expires: expires,
                    gracePeriodExpiresDate: date(&g, 0.2)))
        }
        facts = SourceFacts(
            revenueCatKnowsSubscriber: g.chance(0.9), revenueCatPurchases: purchases, revenueCatEntitlements: entitlements, stores: apple)
        context = DecisionContext(asOf: t, environment: g.chance(0.9) ? .production : .sandbox, catalog: catalog)
    }

    /// The purchases the sources state (Apple's are generated with ids of their own, so none replaces another).
    var effectivePurchases: [PurchaseFact] { facts.revenueCatPurchases + facts.stores.map(\.purchase) }

    private var asOf: Date { context.asOf }

    /// Could this purchase grant a tier above `tier`, as far as the stated facts go?
    func couldGrant(_ p: PurchaseFact, above tier: Int) -> Bool {
        if context.environment == .production && p.isSandbox == true { return false }
        if p.origin == .revenueCat, p.kind == .unstated, context.catalog.tier(for: p.productID) == nil,
            !facts.revenueCatEntitlements.contains(where: { $0.productID == p.productID })
        {
            return false  // a consumable: an unmapped one-time purchase no entitlement names
        }
        return (context.catalog.tier(for: p.productID) ?? Int.max) > tier
    }

    /// A refund that applies to the period stated (CONTRACT "Sources and the decision" and the issue's period rule).
    func refundApplies(_ p: PurchaseFact) -> Bool {
        guard let refunded = p.refundedAt, refunded <= asOf else { return false }
        guard let start = p.purchaseDate else { return statedNonExpiring(p) }
        return refunded >= start
    }

    /// Some source positively shows the end of this purchase at T: expiry at or before T with no grace, a refund
    /// or revocation, a pause, or an expired store state.
    func positivelyEnded(_ p: PurchaseFact) -> Bool {
        if lineRevoked(p) { return true }
        if let state = p.storeState, [.revoked, .expired, .paused, .pending].contains(state) || refundApplies(p) { return true }
        if refundApplies(p) { return true }
        if p.origin == .revenueCat, p.kind == .unstated {
            let naming = facts.revenueCatEntitlements.filter { $0.productID == p.productID }
            if naming.isEmpty {
                guard let entry = context.catalog.entry(for: p.productID) else { return true }
                guard let name = entry.entitlement, let mapped = facts.revenueCatEntitlements.first(where: { $0.identifier == name }),
                    case .at(let end) = mapped.expires
                else { return false }
                return end <= asOf && (mapped.gracePeriodExpiresDate.map { $0 <= asOf } ?? true)
            }
            return naming.allSatisfy { entitlement in
                guard case .at(let end) = entitlement.expires else { return false }
                return end <= asOf
            }
        }
        guard p.kind == .subscription || p.kind == .nonRenewing else { return false }
        guard let expires = p.expiresDate, expires <= asOf else { return false }
        if p.storeState == .gracePeriod && p.gracePeriodExpiresDate == nil { return false }
        return p.gracePeriodExpiresDate.map { $0 <= asOf } ?? true
    }

    /// A one-time line ends for every fact of it when any fact of it states a revocation or a refund that applies
    /// (CONTRACT "Deciding the truth"): a restore transaction of a revoked lifetime purchase is revoked too.
    func lineRevoked(_ p: PurchaseFact) -> Bool {
        guard p.kind == .nonExpiring else { return false }
        return effectivePurchases.contains { q in
            q.kind == .nonExpiring && q.isSameLine(as: p) && (q.storeState == .revoked || refundApplies(q))
        }
    }

    /// The purchase is stated to be non-expiring (a lifetime purchase).
    func statedNonExpiring(_ p: PurchaseFact) -> Bool {
        if p.kind == .nonExpiring { return true }
        return p.origin == .revenueCat && p.kind == .unstated
            && facts.revenueCatEntitlements.contains { $0.productID == p.productID && $0.expires == .never }
    }

    /// Some source positively shows this purchase entitles at T: not revoked, refunded or sandbox, and either stated
    /// non-expiring or stated to run (or be in grace) past T.
    func positivelyEntitled(_ p: PurchaseFact) -> Bool {
        if context.environment == .production && p.isSandbox != false { return false }
        if let state = p.storeState, [.revoked, .expired, .paused, .pending].contains(state) { return false }
        if refundApplies(p) || lineRevoked(p) { return false }
        if statedNonExpiring(p) { return true }
        var expires = p.expiresDate
        var grace = p.gracePeriodExpiresDate
        if p.origin == .revenueCat, p.kind == .unstated {
            grace = nil  // RevenueCat states no grace for one-time purchases
            expires = facts.revenueCatEntitlements.filter { $0.productID == p.productID }.compactMap { e -> Date? in
                if case .at(let date) = e.expires { return date }
                return nil
            }.max()
        } else if p.kind != .subscription && p.kind != .nonRenewing {
            return false
        }
        guard let expires else { return false }
        if expires > asOf { return true }
        if let grace, grace > asOf { return true }
        return p.storeState == .gracePeriod && grace == nil
    }
}
