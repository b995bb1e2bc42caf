import Foundation
import Stripe
import SubreconCore
import Testing

/// Stripe one-time prices (Checkout Sessions) as non-expiring purchases (CONTRACT "Sources and the decision"): decode, map, judge.
@Suite("Stripe one-time purchases")
struct StripeOneTimeTests {
    static let created = Date(timeIntervalSince1970: 1_750_000_000)
    static let asOf = Date(timeIntervalSince1970: 1_760_000_000)

    static func session(
        type: String? = "one_time", mode: String? = "payment", paymentStatus: String? = "paid", livemode: Bool? = true,
        itemsHaveMore: Bool? = false
    ) -> StripeCheckoutSession {
        StripeCheckoutSession(
            id: "cs_1", mode: mode, paymentStatus: paymentStatus, livemode: livemode, created: created, paymentIntent: "pi_1",
            lineItems: [
                StripeLineItem(
                    id: "li_1", price: StripePrice(id: "price_life", product: "prod_life", unitAmount: 4999, currency: "usd", type: type),
                    amountTotal: 4999)
            ], lineItemsHaveMore: itemsHaveMore)
    }

    @Test("a paid one-time price is non-expiring: it entitles without an end date, by prod_ then price_")
    func paidEntitles() throws {
        let facts = try StripeOneTimeMapping.storeFacts(Self.session(), refund: nil).get()
        let fact = try #require(facts.first)
        #expect(facts.count == 1 && fact.purchase.kind == .nonExpiring && fact.purchase.origin == .stripe)
        #expect(fact.purchase.productID == "prod_life" && fact.purchase.alternateProductIDs == ["price_life"])
        #expect(fact.purchase.storeTransactionID == "pi_1" && fact.purchase.isSandbox == false)
        #expect(fact.purchase.price == Money(amount: Decimal(string: "49.99")!, currency: "usd"))
        let judged = try #require(Decision.judge(fact.purchase, asOf: Self.asOf).known)
        #expect(judged.entitled && judged.status == .active && judged.expiresDate == nil)
    }

    @Test("a one-time payment refunded in full never entitles")
    func refundedNeverEntitles() throws {
        let refund = StripePeriodRefund(refundedAt: Self.created.addingTimeInterval(86_400), price: nil, transactionID: "pi_1")
        let fact = try #require(try StripeOneTimeMapping.storeFacts(Self.session(), refund: refund).get().first)
        #expect(fact.purchase.refundTransactionID == "pi_1")
        let judged = try #require(Decision.judge(fact.purchase, asOf: Self.asOf).known)
        #expect(!judged.entitled && judged.status == .refunded && judged.expiresDate == nil)
    }

    @Test("recurring lines, unpaid and subscription sessions grant nothing; unstated kinds and cut lists are errors")
    func hostile() throws {
        #expect(try StripeOneTimeMapping.storeFacts(Self.session(type: "recurring"), refund: nil).get().isEmpty)
        #expect(try StripeOneTimeMapping.isPaidPayment(Self.session(paymentStatus: "unpaid")).get() == false)
        #expect(try StripeOneTimeMapping.isPaidPayment(Self.session(paymentStatus: "no_payment_required")).get() == false)
        #expect(try StripeOneTimeMapping.isPaidPayment(Self.session(mode: "subscription")).get() == false)
        #expect((try? StripeOneTimeMapping.isPaidPayment(Self.session(mode: nil)).get()) == nil)
        #expect((try? StripeOneTimeMapping.storeFacts(Self.session(type: nil), refund: nil).get()) == nil)
        #expect((try? StripeOneTimeMapping.storeFacts(Self.session(itemsHaveMore: true), refund: nil).get()) == nil)
        #expect((try? StripeOneTimeMapping.storeFacts(Self.session(itemsHaveMore: nil), refund: nil).get()) == nil)
        let sandbox = try #require(try StripeOneTimeMapping.storeFacts(Self.session(livemode: false), refund: nil).get().first)
        #expect(sandbox.purchase.isSandbox == true)
    }

    @Test("a checkout sessions page decodes with its expanded line items; an unusable created fails the user")
    func decodes() throws {
        let body = Data(
            #"""
            {"object":"list","has_more":false,"data":[{"id":"cs_a","object":"checkout.session","mode":"payment",
            "status":"complete","payment_status":"paid","livemode":true,"created":1750000000,"payment_intent":"pi_a",
            "line_items":{"object":"list","has_more":false,"data":[{"id":"li_a","amount_total":1200,"currency":"jpy",
            "price":{"id":"price_a","product":{"id":"prod_a"},"type":"one_time"}}]}},
            {"id":"cs_b","mode":"payment","status":"complete","payment_status":"paid","created":1e300,"line_items":{"data":[],"has_more":false}}]}
            """#.utf8)
        let list = try StripeCheckoutSessionList.decode(body: body)
        #expect(list.hasMore == false && list.data.count == 2)
        let fact = try #require(try StripeOneTimeMapping.storeFacts(list.data[0], refund: nil).get().first)
        #expect(fact.purchase.productID == "prod_a" && fact.purchase.price == Money(amount: 1200, currency: "JPY"))
        #expect(fact.purchase.purchaseDate == Self.created)
        #expect(list.data[1].unusableDates == ["created"])
        #expect((try? StripeOneTimeMapping.storeFacts(list.data[1], refund: nil).get()) == nil)
    }
}
