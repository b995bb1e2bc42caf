import Foundation
import SubreconCore
import Testing

@testable import Stripe

/// (CONTRACT "Hostile answers and bounded work") A Stripe timestamp is whole Unix seconds in 1970...2200; one sent but unusable makes the
/// user's evidence unusable (never read as absent, never replaced by another date); a negative amount is unknown.
@Suite("Stripe strict parsing: timestamps present but unusable fail the user closed; negative amounts are unknown")
struct StripeStrictParsingTests {
    static func subscription(_ field: String, _ value: String, itemLevel: Bool = true) throws -> StripeSubscription {
        let periodOwner = itemLevel ? "" : #""current_period_start":1780000000,"current_period_end":1782592000,"#
        let itemPeriod = itemLevel ? #""current_period_start":1780000000,"current_period_end":1782592000,"# : ""
        var body = #"""
            {"id":"sub_1","object":"subscription","status":"active","livemode":true,"cancel_at_period_end":false,\#(periodOwner)
             "items":{"object":"list","data":[{"id":"si_1",\#(itemPeriod)"quantity":1,
               "price":{"id":"price_1","product":"prod_1","unit_amount":999,"currency":"usd"}}]}}
            """#
        if field.hasPrefix("item.") {
            let key = String(field.dropFirst(5))
            body = body.replacingOccurrences(of: #""id":"si_1","#, with: #""id":"si_1","\#(key)":\#(value),"#)
        } else {
            body = body.replacingOccurrences(of: #""id":"sub_1","#, with: #""id":"sub_1","\#(field)":\#(value),"#)
        }
        return try StripeSubscription.decode(body: Data(body.utf8))
    }

    static let unusable = ["32503680000", "7289654400", "1780000000.5", "-1", "1e300", #""1782592000x""#, #""soon""#, "true"]

    @Test("a subscription timestamp present but unusable is an error for the user", arguments: unusable)
    func subscriptionTimestamps(value: String) throws {
        for field in ["current_period_end", "cancel_at", "ended_at", "canceled_at", "trial_end", "start_date", "item.current_period_end"] {
            let mapped = StripeMapping.storeFacts(try Self.subscription(field, value))
            #expect(throws: SourceError.self, "\(field) = \(value)") { try mapped.get() }
        }
        let older = StripeMapping.storeFacts(try Self.subscription("current_period_end", value, itemLevel: false))
        #expect(throws: SourceError.self) { try older.get() }
    }

    @Test("null and absent timestamps are unknown, whole seconds in range and digit strings are read")
    func usable() throws {
        for value in ["null", "1782592000", #""1782592000""#, "7289654399"] {
            let facts = try StripeMapping.storeFacts(try Self.subscription("cancel_at", value)).get()
            #expect(facts.count == 1)
        }
        let fact = try #require(try StripeMapping.storeFacts(try Self.subscription("trial_end", "null")).get().first)
        #expect(fact.purchase.expiresDate == Date(timeIntervalSince1970: 1_782_592_000))
    }

    static func event(refundCreated: String, eventCreated: String = "1780000100") throws -> StripeEvent {
        let body = #"""
            {"object":"list","has_more":false,"data":[{"id":"evt_r","object":"event","created":\#(eventCreated),"livemode":true,
             "type":"charge.refunded","data":{"object":{"id":"ch_1","object":"charge","customer":"cus_1","amount":1999,
             "amount_refunded":1999,"currency":"usd","refunded":true,"payment_intent":"pi_1","refunds":{"object":"list",
             "has_more":false,"data":[{"id":"re_1","object":"refund","created":\#(refundCreated),"status":"succeeded"}]}}}}]}
            """#
        return try #require(try StripeEventList.decode(body: Data(body.utf8)).data.first)
    }

    @Test("a refund dated after 2200 is not replaced by the event's own time: the event states no refund")
    func eventRefundDate() throws {
        #expect(try Self.event(refundCreated: "32503680000").refundedPurchase == nil)
        #expect(try Self.event(refundCreated: "1780000090", eventCreated: "32503680000").refundedPurchase == nil)
        #expect(try Self.event(refundCreated: "1780000090").refundedPurchase?.refundedAt == Date(timeIntervalSince1970: 1_780_000_090))
    }

    @Test("a period refund whose succeeded refund is dated after 2200 is an error for the user")
    func periodRefundDate() throws {
        let charge = try #require(try Self.event(refundCreated: "32503680000").charge)
        let payment = StripeInvoicePayment(
            id: "inpay", amountPaid: 1999, currency: "usd", status: "paid", paymentType: "payment_intent", paymentIntent: "pi_1")
        let result = StripeRefundMapping.periodRefund(
            subscription: "sub_1", payments: [StripePaidPayment(payment: payment, charges: [charge])])
        #expect(throws: SourceError.self) { try result.get() }
    }

    @Test("a negative unit_amount or amount_refunded is an unknown amount, never revenue")
    func negativeAmounts() throws {
        let negativeUnit = try Self.subscription("cancel_at", "null").items?.first.map { item in
            var item = item
            item.price?.unitAmount = -999
            return item
        }
        #expect(StripeMapping.price(of: try #require(negativeUnit), subscriptionCurrency: "usd") == nil)
        let charge = StripeCharge(id: "ch", amount: 1999, amountRefunded: -1999, refunded: true, currency: "usd", refunds: [])
        #expect(StripeRefundMapping.price(of: [charge]) == nil)
    }
}
