import AppStore
import Foundation
import SubreconCore
import Testing

/// (CONTRACT "Sources and the decision") Which Apple purchases are non-expiring is what Apple's transaction `type` says, with no extra
/// setup in product_tiers: only `Non-Consumable` is; an auto-renewable or non-renewing transaction without an
/// `expiresDate` is unknown (never lifetime), and a consumable entitles nothing. From the verified payload through
/// `AppleSubscriptionMapping` to `decide`.
@Suite("Apple non-expiring purchases: mapping and decision (CONTRACT 'Sources and the decision')")
struct NonExpiringAppleTests {
    static let asOf = Date(timeIntervalSince1970: 1_780_282_800)  // 2026-06-01T03:00:00Z
    static let context = DecisionContext(
        asOf: asOf, catalog: ProductCatalog([.init(productID: "pro.lifetime", tier: 2, entitlement: "pro")]))

    struct Case: Sendable, CustomTestStringConvertible {
        let type: String
        let revokedDaysAgo: Double?
        /// nil: unknown, the row is left untouched.
        let tier: Int?
        var testDescription: String { "\(type)\(revokedDaysAgo == nil ? "" : ", revoked")" }
    }

    static let cases: [Case] = [
        Case(type: "Non-Consumable", revokedDaysAgo: nil, tier: 2),
        Case(type: "Non-Consumable", revokedDaysAgo: 1, tier: 0),
        Case(type: "Auto-Renewable Subscription", revokedDaysAgo: nil, tier: nil),
        Case(type: "Non-Renewing Subscription", revokedDaysAgo: nil, tier: nil),
        Case(type: "Consumable", revokedDaysAgo: nil, tier: nil),
    ]

    static func transaction(type: String, revokedDaysAgo: Double?) -> JWSTransactionDecodedPayload {
        var transaction = JWSTransactionDecodedPayload(
            originalTransactionId: "3000", transactionId: "3000", bundleId: "com.example", productId: "pro.lifetime",
            purchaseDate: asOf.addingTimeInterval(-400 * 86_400), expiresDate: nil, type: type,
            signedDate: asOf.addingTimeInterval(-60), environment: "Production")
        transaction.revocationDate = revokedDaysAgo.map { asOf.addingTimeInterval(-$0 * 86_400) }
        return transaction
    }

    @Test("a transaction without expiresDate: only Non-Consumable entitles, without an end; the others are unknown", arguments: cases)
    func kinds(_ c: Case) throws {
        let fact = try AppleSubscriptionMapping.purchaseFact(
            status: nil, transaction: Self.transaction(type: c.type, revokedDaysAgo: c.revokedDaysAgo), renewal: nil)
        #expect(fact.isLifetime == (c.type == "Non-Consumable"))
        var facts = SourceFacts(
            revenueCatKnowsSubscriber: false, revenueCatPurchases: [], stores: [StoreFact(lookupID: "3000", purchase: fact)])
        facts.noteAsked(.appStore)
        // A holder of tier 2 whose row says it ended 20 days ago; and one without any tier.
        for held in [true, false] {
            let row = UserRow(
                id: "u-life", currentTier: held ? 2 : 0, status: held ? "active" : "expired",
                endDate: Self.asOf.addingTimeInterval(-20 * 86_400), source: "apple_iap", productID: "pro.lifetime",
                originalTransactionID: "3000", autoRenew: false)
            let verdict = Decision.decide(row: row, facts: facts, context: Self.context)
            if let tier = c.tier {
                let truth = try #require(verdict.truth, "\(c)")
                #expect(truth.tier == tier, "\(c)")
                if tier > 0 {
                    #expect(truth.endDate == nil && truth.status == .active, "a lifetime purchase has no end: \(truth)")
                    #expect(verdict.changesRow, "\(c), held \(held): \(verdict.action)")
                } else {
                    #expect(truth.status == .refunded, "\(c)")
                    if held { #expect(verdict.action == .downgrade, "\(c): \(verdict.action)") }
                }
            } else {
                #expect(!verdict.changesRow, "\(c), held \(held): unknown never changes a tier (\(verdict.action))")
                #expect(verdict.truth?.tier == nil || verdict.truth?.tier == row.currentTier, "\(c)")
            }
        }
    }
}
