import Foundation
import SubreconCore
import SubreconTestKit
import Testing

/// A fact about line X never changes the outcome for a user whose only entitling line is Y (CONTRACT "Whose purchase it is").
@Suite("Purchase lines: property over generated facts")
struct PurchaseLinePropertyTests {
    static let stores: [(StoreKind, FactOrigin)] = [(.appStore, .appStore), (.playStore, .googlePlay), (.stripe, .stripe)]

    /// The user (free, or holding the tier Y grants), their only entitling line Y (from RevenueCat or its store), and
    /// a fact about another line X of a random store, product, state and environment, judged not entitled.
    static func input(seed: UInt64) -> (row: UserRow, facts: SourceFacts, other: StoreFact) {
        var g = SeededRandom(seed: seed)
        let (yStore, yOrigin) = g.pick(stores)
        let product = g.pick(["premium_monthly", "pro_monthly", "gp_premium"])
        var y = PurchaseFact(
            origin: g.chance(0.5) ? .revenueCat : yOrigin, productID: product, store: yStore, kind: .subscription,
            isSandbox: false, purchaseDate: days(-Double(g.int(1...20))), expiresDate: days(Double(g.int(1...30))),
            autoRenew: g.pick([true, false, nil]), storeTransactionID: "Y-\(g.int(0...9))", line: nil, buyer: .unstated)
        y.line = PurchaseLine.of(store: yStore, ids: [y.storeTransactionID])
        let (xStore, xOrigin) = g.pick(stores)
        let x = PurchaseFact(
            origin: xOrigin, productID: g.chance(0.6) ? product : g.pick(["premium_monthly", "pro_monthly", "gp_premium"]),
            store: xStore, kind: .subscription, isSandbox: g.pick([false, true, nil]),
            purchaseDate: days(-Double(g.int(30...2000))), expiresDate: g.chance(0.9) ? days(Double(g.int(-1900...40))) : nil,
            refundedAt: g.chance(0.2) ? days(-Double(g.int(1...29))) : nil, autoRenew: false,
            storeState: g.pick([nil, .expired, .revoked, .active, .paused]), storeTransactionID: "X-\(g.int(0...9))",
            line: PurchaseLine.of(store: xStore, ids: ["X-\(g.int(0...9))"]), buyer: .unstated)
        let other = StoreFact(lookupID: x.storeTransactionID ?? "X", purchase: x)
        let tier = catalog.tier(for: product) ?? 1
        let row = UserRow(
            id: "u1", currentTier: g.pick([0, tier]), status: "active", endDate: days(Double(g.int(-10...30))),
            source: yStore.subscriptionSource, productID: product, autoRenew: true,
            updatedAtMicros: Int64(days(-Double(g.int(0...40))).timeIntervalSince1970 * 1_000_000))
        var facts: SourceFacts
        if y.origin == .revenueCat {
            facts = SourceFacts(revenueCatKnowsSubscriber: true, revenueCatPurchases: [y])
        } else {
            facts = SourceFacts(
                revenueCatKnowsSubscriber: g.chance(0.5), revenueCatPurchases: [], stores: [StoreFact(lookupID: "Y", purchase: y)])
        }
        facts.asked = [.revenueCat, yOrigin]
        return (row, facts, other)
    }

    @Test("a fact about line X never changes the outcome for a user whose only entitling line is Y")
    func otherLineChangesNothing() {
        var fired = 0
        let seeds = DecisionProperty.seeds(count: 2_000, runSeed: 25)
        for seed in seeds {
            let (row, facts, other) = Self.input(seed: seed)
            guard Decision.judge(other.purchase, asOf: T).known?.entitled == false else { continue }
            fired += 1
            var with = facts
            with.stores.append(other)
            let alone = Decision.decide(row: row, facts: facts, context: context)
            let both = Decision.decide(row: row, facts: with, context: context)
            #expect(
                alone.truth?.tier == both.truth?.tier,
                "seed \(seed): tier \(String(describing: alone.truth?.tier)) → \(String(describing: both.truth?.tier))")
            #expect(
                alone.action == both.action,
                "seed \(seed): \(alone.action) \(alone.error?.description ?? "") → \(both.action) (\(both.drift)) \(row) \(facts)")
            #expect(alone.truth?.status == both.truth?.status, "seed \(seed)")
        }
        #expect(Double(fired) / Double(seeds.count) >= DecisionPropertyTests.minimumFiringRate, "premise held in \(fired) cases")
    }
}
