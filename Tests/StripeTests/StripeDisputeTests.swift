import Foundation
import SubreconCore
import Testing

@testable import Stripe

@Suite("Stripe: a subscription canceled for a disputed payment ends refunded (CONTRACT 'Sources and the decision')")
struct StripeDisputeTests {
    static func body(reason: String?) -> Data {
        let details = reason.map { #","cancellation_details":{"reason":"\#($0)","comment":null,"feedback":null}"# } ?? ""
        return Data(
            """
            {"id":"sub_9","object":"subscription","status":"canceled","livemode":true,"canceled_at":1781000000,
             "ended_at":1781000000\(details),
             "items":{"object":"list","has_more":false,"data":[{"id":"si_9","current_period_start":1780000000,
               "current_period_end":1782592000,"quantity":1,"price":{"id":"price_m","product":"prod_pro","unit_amount":999,
               "currency":"usd"}}]}}
            """.utf8)
    }

    @Test("cancellation_details.reason payment_disputed → refunded at ended_at; other reasons → expired; the line is the subscription")
    func disputed() throws {
        let asOf = Date(timeIntervalSince1970: 1_781_500_000)
        let disputed = try #require(
            try StripeMapping.storeFacts(StripeSubscription.decode(body: Self.body(reason: "payment_disputed"))).get().first)
        #expect(disputed.purchase.refundedAt == Date(timeIntervalSince1970: 1_781_000_000))
        #expect(Decision.judge(disputed.purchase, asOf: asOf).known?.status == .refunded)
        #expect(disputed.line?.keys == ["sub_9", "si_9"])
        for reason in ["cancellation_requested", "payment_failed", nil] as [String?] {
            let fact = try #require(try StripeMapping.storeFacts(StripeSubscription.decode(body: Self.body(reason: reason))).get().first)
            #expect(fact.purchase.refundedAt == nil)
            #expect(Decision.judge(fact.purchase, asOf: asOf).known?.status == .expired)
        }
    }
}
