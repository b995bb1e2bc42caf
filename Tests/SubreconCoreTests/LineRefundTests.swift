import Foundation
import SubreconCore
import Testing

/// A refund or revocation is a fact about its line, not about the one transaction stating it (CONTRACT "Deciding the
/// truth"): the core applies it to every fact of the line, whatever the other transactions say.
@Suite("A refund ends its line, not one transaction")
struct LineRefundTests {
    /// An Apple non-consumable transaction of original transaction `original`, as the mapping builds it: a revocation
    /// is its date (`refundedAt`), no store state.
    static func lifetime(_ original: String, txn: String, purchased: Double, revoked: Double? = nil) -> StoreFact {
        let purchase = PurchaseFact(
            origin: .appStore, productID: "lifetime", store: .appStore, kind: .nonExpiring, isSandbox: false,
            purchaseDate: days(purchased), refundedAt: revoked.map(days), autoRenew: false,
            storeState: nil, originalTransactionID: original, storeTransactionID: txn,
            line: PurchaseLine.of(store: .appStore, ids: [original, txn]), buyer: .unstated)
        return StoreFact(lookupID: original, purchase: purchase)
    }

    static let lifetimeRow = UserRow(
        id: "u1", currentTier: 2, status: "active", source: "apple_iap", productID: "lifetime", originalTransactionID: "9000",
        autoRenew: false)

    @Test("a lifetime purchase revoked two days ago and a later restore transaction of it (no revocation): refunded")
    func restoreOfARevokedLine() {
        for order in [[0, 1], [1, 0]] {
            let facts = [
                Self.lifetime("9000", txn: "9000", purchased: -40, revoked: -2), Self.lifetime("9000", txn: "9001", purchased: -1),
            ]
            let verdict = Decision.decide(
                row: Self.lifetimeRow,
                facts: SourceFacts(revenueCatKnowsSubscriber: false, revenueCatPurchases: [], stores: order.map { facts[$0] }),
                context: context)
            #expect(verdict.truth?.tier == 0 && verdict.truth?.status == .refunded, "order \(order)")
            #expect(verdict.intents.map(\.kind) == [.refunded])
        }
    }

    @Test("a revocation of one line never ends another line; a refund after T is not yet one")
    func otherLinesStand() {
        let other = Self.lifetime("9100", txn: "9100", purchased: -30)
        let revoked = Self.lifetime("9000", txn: "9000", purchased: -40, revoked: -2)
        var row = Self.lifetimeRow
        row.originalTransactionID = "9100"
        let verdict = Decision.decide(
            row: row, facts: SourceFacts(revenueCatKnowsSubscriber: false, revenueCatPurchases: [], stores: [revoked, other]),
            context: context)
        #expect(verdict.truth?.tier == 2 && verdict.truth?.status == .active)
        var future = Self.lifetime("9000", txn: "9000", purchased: -40)
        future.purchase.refundedAt = days(3)
        let later = Decision.decide(
            row: Self.lifetimeRow,
            facts: SourceFacts(
                revenueCatKnowsSubscriber: false, revenueCatPurchases: [],
                stores: [future, Self.lifetime("9000", txn: "9001", purchased: -1)]),
            context: context)
        #expect(later.truth?.tier == 2, "a refund dated after T is no refund at T")
        let revokedLater = Decision.decide(
            row: Self.lifetimeRow,
            facts: SourceFacts(
                revenueCatKnowsSubscriber: false, revenueCatPurchases: [],
                stores: [Self.lifetime("9000", txn: "9000", purchased: -40, revoked: 2), Self.lifetime("9000", txn: "9001", purchased: -1)]),
            context: context)
        #expect(revokedLater.truth?.tier == 2, "a revocation dated after T (a backfill judging the past) is none at T")
    }

    @Test("a subscription line keeps the per-period rule: an earlier period's refund, even issued now, never ends it")
    func subscriptionLine() {
        func renewal(_ txn: String, purchased: Double, expires: Double, refunded: Double? = nil) -> StoreFact {
            let purchase = PurchaseFact(
                origin: .appStore, productID: "premium_monthly", store: .appStore, isSandbox: false, purchaseDate: days(purchased),
                expiresDate: days(expires), refundedAt: refunded.map(days), autoRenew: true, originalTransactionID: "8000",
                storeTransactionID: txn, line: PurchaseLine.of(store: .appStore, ids: ["8000", txn]), buyer: .unstated)
            return StoreFact(lookupID: "8000", purchase: purchase)
        }
        let row = UserRow(
            id: "u1", currentTier: 1, status: "active", endDate: days(20), source: "apple_iap", productID: "premium_monthly",
            originalTransactionID: "8000", autoRenew: true)
        let older = renewal("8001", purchased: -40, expires: -10, refunded: -1)
        let kept = Decision.decide(
            row: row,
            facts: SourceFacts(
                revenueCatKnowsSubscriber: false, revenueCatPurchases: [], stores: [older, renewal("8002", purchased: -10, expires: 20)]),
            context: context)
        #expect(kept.truth?.tier == 1, "an earlier period's refund never revokes the current period")
    }
}
