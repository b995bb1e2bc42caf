import Foundation
import SubreconCore
import Testing

/// One store's own fact about a line, as its mapping states it.
func storeFact(
    _ origin: FactOrigin, _ product: String = "gp_premium", lookup: String, order: String? = nil, expires: Double?,
    state: StoreState? = nil, refunded: Double? = nil, sandbox: Bool? = false, otid: String? = nil, start: Double = -400
) -> StoreFact {
    let store: StoreKind =
        switch origin {
        case .googlePlay: .playStore
        case .stripe: .stripe
        default: .appStore
        }
    let purchase = PurchaseFact(
        origin: origin, productID: product, store: store, kind: .subscription, isSandbox: sandbox, purchaseDate: days(start),
        expiresDate: expires.map(days), refundedAt: refunded.map(days), autoRenew: false, storeState: state,
        originalTransactionID: otid ?? (origin == .stripe ? lookup : nil), storeTransactionID: order ?? (origin == .stripe ? lookup : nil),
        line: PurchaseLine.of(store: store, ids: [lookup, order, otid]), buyer: .unstated)
    return StoreFact(lookupID: lookup, purchase: purchase)
}

/// A RevenueCat entry naming its line by `txn`.
func rcEntry(_ product: String = "gp_premium", store: StoreKind = .playStore, txn: String?, expires: Double, refunded: Double? = nil)
    -> PurchaseFact
{
    var p = sub(product, store: store, purchased: -20, expires: expires, refunded: refunded, txn: txn)
    p.line = txn.flatMap { PurchaseLine.of(store: store, ids: [$0]) }
    return p
}

func lineRow(
    tier: Int = 1, source: String, product: String = "gp_premium", end: Double? = 15, otid: String? = nil,
    ids: [FactOrigin: String] = [:], updated: Double = -1
) -> UserRow {
    UserRow(
        id: "u1", currentTier: tier, status: "active", endDate: end.map(days), source: source, productID: product,
        originalTransactionID: otid, autoRenew: true,
        updatedAtMicros: Int64(days(updated).timeIntervalSince1970 * 1_000_000), identifiers: ids)
}

@Suite("Purchase lines: a store overrides RevenueCat about the same line only; absence holds per line (CONTRACT 'Whose purchase it is')")
struct PurchaseLineDecisionTests {
    let googleRow = lineRow(source: "google_iap", ids: [.googlePlay: "tok-old"])

    @Test("a Google resubscription: the old token's EXPIRED never ends the new line RevenueCat reports entitled")
    func oldTokenExpiredKeepsNewLine() {
        let facts = SourceFacts(
            revenueCatKnowsSubscriber: true, revenueCatPurchases: [rcEntry(txn: "GPA.2222-new..0", expires: 20)],
            stores: [storeFact(.googlePlay, lookup: "tok-old", order: "GPA.1111-old..5", expires: -30, state: .expired)])
        let verdict = Decision.decide(row: googleRow, facts: facts, context: context)
        #expect(verdict.truth?.tier == 1)
        #expect(verdict.action != .downgrade && verdict.action != .skipped)
        #expect(verdict.truth?.endDate == days(20))
    }

    @Test("a Google 410 about the old token never ends the new line; alone, it ends its own line and keeps the end date")
    func goneIsAboutItsOwnLine() {
        let gone = StoreFact(
            lookupID: "tok-old",
            purchase: PurchaseFact(
                origin: .googlePlay, productID: "gp_premium", store: .playStore, kind: .subscription, isSandbox: nil,
                autoRenew: false, storeState: .expired, line: PurchaseLine.of(store: .playStore, ids: ["tok-old"]), buyer: .unstated))
        let withNew = SourceFacts(
            revenueCatKnowsSubscriber: true, revenueCatPurchases: [rcEntry(txn: "GPA.2222-new..0", expires: 20)], stores: [gone])
        #expect(Decision.decide(row: googleRow, facts: withNew, context: context).truth?.tier == 1)
        let alone = Decision.decide(
            row: googleRow, facts: SourceFacts(revenueCatKnowsSubscriber: false, revenueCatPurchases: [], stores: [gone]), context: context)
        #expect(alone.truth?.tier == 0)
        #expect(alone.truth?.endDate == googleRow.endDate, "a 410 states no date: the row's end date stays, never NULL")
    }

    @Test(
        "without RevenueCat, a 404, a livemode:false object, a line canceled years ago or another store's line never lifts absence",
        arguments: [
            (
                "Stripe livemode:false, canceled", lineRow(source: "stripe", product: "pro_monthly", ids: [.stripe: "cus_1"]),
                [storeFact(.stripe, "pro_monthly", lookup: "sub_test", expires: -5, state: .expired, sandbox: true)]
            ),
            (
                "Stripe livemode:false, active", lineRow(source: "stripe", product: "pro_monthly", ids: [.stripe: "cus_1"]),
                [storeFact(.stripe, "pro_monthly", lookup: "sub_test", expires: 25, state: .active, sandbox: true)]
            ),
            (
                "Stripe subscription canceled years ago",
                lineRow(tier: 2, source: "stripe", product: "pro_monthly", ids: [.stripe: "cus_1"]),
                [storeFact(.stripe, "pro_monthly", lookup: "sub_2019", expires: -1500, state: .expired, start: -1530)]
            ),
            (
                "a Stripe line of an Apple user",
                lineRow(tier: 2, source: "apple_iap", product: "pro_monthly", otid: "1000", ids: [.stripe: "cus_1"]),
                [storeFact(.stripe, "pro_monthly", lookup: "sub_1", expires: -3, state: .expired)]
            ),
            (
                "another Apple original transaction", lineRow(tier: 2, source: "apple_iap", product: "pro_monthly", otid: "1000"),
                [storeFact(.appStore, "pro_monthly", lookup: "2000", order: "2005", expires: -3, state: .expired, otid: "2000")]
            ),
            (
                "another Google token", lineRow(source: "google_iap", ids: [.googlePlay: "tok-new"]),
                [storeFact(.googlePlay, lookup: "tok-other", order: "GPA.9..1", expires: -3, state: .expired)]
            ),
        ] as [(String, UserRow, [StoreFact])])
    func absenceHoldsPerLine(name: String, row: UserRow, stores: [StoreFact]) {
        var facts = SourceFacts(revenueCatKnowsSubscriber: false, revenueCatPurchases: [], stores: stores)
        facts.asked = [.revenueCat, stores[0].purchase.origin]
        let verdict = Decision.decide(row: row, facts: facts, context: context)
        #expect(verdict.action == .skipped, "\(name): \(verdict.action) \(verdict.truth.map { "\($0.tier)" } ?? "")")
        #expect(verdict.drift.contains(.unknownAtSource), "\(name): \(verdict.drift)")
    }

    @Test("without RevenueCat, the row's own line ending is evidence: Google by token, Stripe by product (canceled mid-period)")
    func ownLineEnds() {
        let google = SourceFacts(
            revenueCatKnowsSubscriber: false, revenueCatPurchases: [],
            stores: [storeFact(.googlePlay, lookup: "tok-old", order: "GPA.1..2", expires: -3, state: .expired)])
        #expect(Decision.decide(row: googleRow, facts: google, context: context).truth?.tier == 0)
        let stripeRow = lineRow(source: "stripe", product: "pro_monthly", end: 120, ids: [.stripe: "cus_1"], updated: 0)
        let stripe = SourceFacts(
            revenueCatKnowsSubscriber: false, revenueCatPurchases: [],
            stores: [storeFact(.stripe, "pro_monthly", lookup: "sub_1", expires: -3, state: .expired, start: -60)])
        let verdict = Decision.decide(row: stripeRow, facts: stripe, context: context)
        #expect(verdict.truth?.tier == 0)
        #expect(verdict.truth?.originalTransactionID == nil, "a Stripe subscription id never goes into iap_original_transaction_id")
    }

    @Test("the tier is the best line's: an ended line of a higher tier never lowers another live line")
    func bestLine() {
        let facts = SourceFacts(
            revenueCatKnowsSubscriber: true,
            revenueCatPurchases: [
                rcEntry("pro_monthly", store: .stripe, txn: "sub_old", expires: -5), rcEntry(txn: "GPA.5..0", expires: 10),
            ],
            stores: [
                storeFact(.stripe, "pro_monthly", lookup: "sub_old", expires: -5, state: .expired),
                storeFact(.googlePlay, lookup: "tok-old", order: "GPA.4..9", expires: -60, state: .expired),
            ])
        let verdict = Decision.decide(row: googleRow, facts: facts, context: context)
        #expect(verdict.truth?.tier == 1)
        #expect(verdict.truth?.source == "google_iap")
    }

    @Test("a refund on a line ends it refunded, intent refunded and counted, with or without RevenueCat", arguments: [true, false])
    func refundOnLine(withRevenueCat: Bool) {
        let voided = storeFact(.googlePlay, lookup: "tok-old", order: "GPA.1111-old..2", expires: -1, state: .expired, refunded: -2)
        let facts = SourceFacts(
            revenueCatKnowsSubscriber: withRevenueCat,
            revenueCatPurchases: withRevenueCat ? [rcEntry(txn: "GPA.1111-old..2", expires: -1)] : [],
            stores: [voided])
        let verdict = Decision.decide(row: googleRow, facts: facts, context: context)
        #expect(verdict.truth?.tier == 0)
        #expect(verdict.truth?.status == .refunded)
        #expect(verdict.intents.map(\.kind) == [.refunded])
        #expect(verdict.refunds?.count == 1)
    }

    @Test("Apple's revocationDate on an expired transaction ends the line refunded")
    func appleRevocation() {
        let row = lineRow(tier: 2, source: "apple_iap", product: "pro_monthly", otid: "1000")
        let facts = SourceFacts(
            revenueCatKnowsSubscriber: false, revenueCatPurchases: [],
            stores: [
                storeFact(.appStore, "pro_monthly", lookup: "1000", order: "1009", expires: -1, state: .expired, refunded: -3, otid: "1000")
            ])
        let verdict = Decision.decide(row: row, facts: facts, context: context)
        #expect(verdict.truth?.status == .refunded)
        #expect(verdict.truth?.originalTransactionID == "1000")
    }

    @Test("a Stripe user's change keeps the row's iap_original_transaction_id")
    func stripeKeepsAppleColumn() {
        let row = lineRow(tier: 1, source: "stripe", product: "pro_monthly", otid: "apple-1", ids: [.stripe: "cus_1"])
        let facts = SourceFacts(
            revenueCatKnowsSubscriber: false, revenueCatPurchases: [],
            stores: [storeFact(.stripe, "pro_monthly", lookup: "sub_9", expires: 40, state: .active)]
        )
        let verdict = Decision.decide(row: row, facts: facts, context: context)
        #expect(verdict.truth?.tier == 2)
        #expect(verdict.truth?.originalTransactionID == "apple-1")
    }
}
