import Foundation
import GooglePlay
import SubreconCore
import Testing

@Suite("Google Play: purchase lines (linkedPurchaseToken) and voids as facts about their line (CONTRACT 'Whose purchase it is')")
struct GooglePlayLineTests {
    static func answer(_ state: String, linked: String?, order: String = "GPA.7777-new..1") -> SubscriptionPurchaseV2 {
        SubscriptionPurchaseV2(
            startTime: "2026-05-01T00:00:00Z", subscriptionState: state, linkedPurchaseToken: linked,
            lineItems: [
                SubscriptionLineItem(
                    productId: "premium_monthly", expiryTime: "2026-07-01T00:00:00Z", autoRenewingPlan: .init(autoRenewEnabled: true),
                    latestSuccessfulOrderId: order)
            ])
    }

    @Test("a token and the token it links to are one line, with its order ids without their suffix")
    func linkedIsOneLine() throws {
        let fact = try #require(
            try GooglePlayMapping.storeFacts(Self.answer("SUBSCRIPTION_STATE_ACTIVE", linked: "tok-old"), token: "tok-new").first)
        let keys = try #require(fact.line?.keys)
        #expect(keys.isSuperset(of: ["tok-new", "tok-old", "GPA.7777-new"]))
        let old = PurchaseLine.of(store: .playStore, ids: ["tok-old"])!
        #expect(fact.line?.isSame(as: old) == true)
        #expect(fact.line?.isSame(as: PurchaseLine.of(store: .playStore, ids: ["GPA.1111-other..4"])!) == false)
    }

    @Test("linkedPurchaseToken is read strictly: an empty one or one of another type fails the answer")
    func linkedStrict() throws {
        #expect(throws: GooglePlayMappingError.self) {
            try GooglePlayMapping.storeFacts(Self.answer("SUBSCRIPTION_STATE_ACTIVE", linked: ""), token: "t")
        }
        let body = #"{"subscriptionState":"SUBSCRIPTION_STATE_ACTIVE","linkedPurchaseToken":42,"lineItems":[]}"#
        #expect(throws: (any Error).self) { try GoogleJSON.subscription(Data(body.utf8)) }
    }

    static let voidedAt = ISO8601.date("2026-06-10T00:00:00Z")!

    @Test("a void of the line (by token or order) dates the refund of an EXPIRED answer, keyed by the voided order")
    func voidEndsExpiredLine() throws {
        let facts = try GooglePlayMapping.storeFacts(Self.answer("SUBSCRIPTION_STATE_EXPIRED", linked: nil), token: "tok-1")
        for void in [
            GoogleVoid(token: "tok-1", orderID: "GPA.7777-new..0", voidedAt: Self.voidedAt),
            GoogleVoid(token: nil, orderID: "GPA.7777-new..1", voidedAt: Self.voidedAt),
        ] {
            let voided = try #require(GooglePlayMapping.applyingVoids(facts, voids: [void]).first)
            #expect(voided.purchase.refundedAt == Self.voidedAt)
            #expect(voided.purchase.refundTransactionID == void.orderID)
            #expect(Decision.judge(voided.purchase, asOf: Self.voidedAt.addingTimeInterval(86_400)).known?.status == .refunded)
        }
    }

    @Test(
        "a void of the line's other token (linkedPurchaseToken) or of an earlier renewal's order refunds an EXPIRED line, never a live one")
    func voidOfOtherTokenOrRenewal() throws {
        let order = "GPA.1234-5678-9012-34567"
        let expired = try GooglePlayMapping.storeFacts(
            Self.answer("SUBSCRIPTION_STATE_EXPIRED", linked: "tok-old", order: order + "..1"), token: "tok-new")
        let live = try GooglePlayMapping.storeFacts(
            Self.answer("SUBSCRIPTION_STATE_ACTIVE", linked: "tok-old", order: order + "..1"), token: "tok-new")
        for void in [
            GoogleVoid(token: "tok-old", orderID: "GPA.9876-5432-1098-76543..0", voidedAt: Self.voidedAt),
            GoogleVoid(token: "tok-new", orderID: order + "..0", voidedAt: Self.voidedAt),
            GoogleVoid(token: nil, orderID: order + "..0", voidedAt: Self.voidedAt),
        ] {
            let voided = try #require(GooglePlayMapping.applyingVoids(expired, voids: [void]).first)
            #expect(voided.purchase.refundTransactionID == void.orderID, "\(void)")
            #expect(Decision.judge(voided.purchase, asOf: Self.voidedAt.addingTimeInterval(86_400)).known?.status == .refunded, "\(void)")
            #expect(GooglePlayMapping.applyingVoids(live, voids: [void]) == live, "an earlier period's void: \(void)")
        }
    }

    @Test("an earlier period's void never ends a live line; another line's void changes nothing")
    func voidOfOtherPeriodOrLine() throws {
        let live = try GooglePlayMapping.storeFacts(Self.answer("SUBSCRIPTION_STATE_ACTIVE", linked: nil), token: "tok-1")
        let earlier = GoogleVoid(token: "tok-1", orderID: "GPA.7777-new..0", voidedAt: Self.voidedAt)
        #expect(GooglePlayMapping.applyingVoids(live, voids: [earlier]) == live)
        let expired = try GooglePlayMapping.storeFacts(Self.answer("SUBSCRIPTION_STATE_EXPIRED", linked: nil), token: "tok-1")
        let other = GoogleVoid(token: "tok-2", orderID: "GPA.9999-x..0", voidedAt: Self.voidedAt)
        #expect(GooglePlayMapping.applyingVoids(expired, voids: [other]) == expired)
    }
}
