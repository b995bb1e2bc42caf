import Foundation
import StoreSimulator
import SubreconCore
import Testing

@testable import Stripe

/// Decoding of the latest invoice, invoice payments and charges (API version `2025-03-31.basil`), hostile bodies
/// included.
@Suite("Stripe refund wire decoding")
struct StripeRefundDecodingTests {
    static let expandedList = #"""
        {"object": "list", "url": "/v1/subscriptions", "has_more": false, "data": [{
          "id": "sub_1", "object": "subscription", "customer": "cus_1", "status": "active", "livemode": true,
          "items": {"object": "list", "data": [{"id": "si_1", "current_period_start": 1780000000,
            "current_period_end": 1782592000, "quantity": 1,
            "price": {"id": "price_1", "product": "prod_1", "unit_amount": 999, "currency": "usd"}}]},
          "latest_invoice": {"id": "in_1", "object": "invoice", "status": "paid", "amount_due": 999, "amount_paid": 999,
            "total": 999, "currency": "usd", "billing_reason": "subscription_cycle",
            "parent": {"type": "subscription_details", "subscription_details": {"subscription": "sub_1"}},
            "payments": {"object": "list", "has_more": false, "url": "/v1/invoice_payments", "data": [
              {"id": "inpay_1", "object": "invoice_payment", "amount_paid": 999, "amount_requested": 999, "currency": "usd",
               "invoice": "in_1", "is_default": true, "livemode": true, "status": "paid",
               "payment": {"type": "payment_intent", "payment_intent": "pi_1"},
               "status_transitions": {"paid_at": 1780000000, "canceled_at": null}}]}}
        }]}
        """#

    @Test("an expanded latest invoice carries its payments: amounts, status, default, payment intent")
    func expandedInvoice() throws {
        let list = try StripeSubscriptionList.decode(body: Data(Self.expandedList.utf8))
        let invoice = try #require(list.data.first?.latestInvoice)
        #expect(invoice.id == "in_1" && invoice.expanded && invoice.status == "paid" && invoice.amountPaid == 999)
        #expect(invoice.billingReason == "subscription_cycle")
        let payments = try #require(StripeRefundMapping.statedPayments(of: invoice))
        #expect(
            payments == [
                StripeInvoicePayment(
                    id: "inpay_1", invoice: "in_1", amountPaid: 999, amountRequested: 999, currency: "usd", status: "paid",
                    isDefault: true, livemode: true, paymentType: "payment_intent", paymentIntent: "pi_1")
            ])
    }

    @Test("latest_invoice as a plain id stays an id (payments to be listed); null or a number is unknown")
    func lenientInvoice() throws {
        func invoice(_ value: String) throws -> StripeInvoice? {
            let body = #"{"id": "sub_1", "status": "active", "items": {"data": []}, "latest_invoice": "# + value + "}"
            return try StripeSubscription.decode(body: Data(body.utf8)).latestInvoice
        }
        let plain = try #require(try invoice(#""in_9""#))
        #expect(plain.id == "in_9" && !plain.expanded && StripeRefundMapping.statedPayments(of: plain) == nil)
        #expect(try invoice("null") == nil)
        #expect(try invoice("12") == nil)
        #expect(try invoice("[1]") == nil)
        let incomplete = try #require(try invoice(#"{"id": "in_2", "amount_paid": 5, "payments": {"data": [], "has_more": true}}"#))
        #expect(StripeRefundMapping.statedPayments(of: incomplete) == nil, "a cut payments list is listed again")
        let unreadable = try #require(try invoice(#"{"id": "in_3", "amount_paid": 5, "payments": "inpay_1"}"#))
        #expect(unreadable.payments == nil && StripeRefundMapping.statedPayments(of: unreadable) == nil)
    }

    @Test("a charge with expanded refunds decodes every field")
    func charge() throws {
        let body = #"""
            {"id": "ch_1", "object": "charge", "amount": 999, "amount_refunded": 999, "refunded": true, "currency": "usd",
             "payment_intent": {"id": "pi_1", "object": "payment_intent"}, "livemode": true, "status": "succeeded",
             "refunds": {"object": "list", "has_more": false, "data": [
               {"id": "re_1", "object": "refund", "amount": 999, "created": 1780500000, "status": "succeeded"}]}}
            """#
        let charge = try StripeCharge.decode(body: Data(body.utf8))
        #expect(
            charge
                == StripeCharge(
                    id: "ch_1", amount: 999, amountRefunded: 999, refunded: true, currency: "usd", paymentIntent: "pi_1",
                    refunds: [
                        StripeRefund(id: "re_1", amount: 999, created: Date(timeIntervalSince1970: 1_780_500_000), status: "succeeded")
                    ]))
    }

    @Test("hostile charges: huge numbers, strings for numbers, a missing refunded, a missing refunds list never trap")
    func hostileCharge() throws {
        let body = #"""
            {"object": "list", "has_more": false, "data": [
              {"id": "ch_huge", "amount": 1e300, "amount_refunded": 99999999999999999999999, "refunded": "true",
               "refunds": {"data": [{"id": "re", "amount": -1e400, "created": 1e300, "status": 7}], "has_more": "no"}},
              {"id": "ch_text", "amount": "1200", "amount_refunded": " 1200 ", "currency": "jpy",
               "refunds": {"data": [{"created": "1780500000", "status": "succeeded"}], "has_more": false}},
              {"id": "ch_bare"},
              {"id": "ch_notlist", "refunds": [1, 2], "refunded": null}]}
            """#
        let list = try StripeChargeList.decode(body: Data(body.utf8))
        #expect(list.data.count == 4)
        let huge = list.data[0]
        #expect(huge.amount == nil && huge.amountRefunded == nil && huge.refunded == nil && huge.refundsHaveMore == nil)
        var unusable = StripeRefund(id: "re", amount: nil, created: nil, status: nil)
        // `created: 1e300` is sent but unusable, never absent (CONTRACT "Hostile answers and bounded work")
        unusable.createdUnusable = true
        #expect(huge.refunds == [unusable])
        let text = list.data[1]
        #expect(text.amount == 1200 && text.amountRefunded == 1200 && text.refunded == nil)
        #expect(text.refunds?.first?.created == Date(timeIntervalSince1970: 1_780_500_000))
        #expect(list.data[2].refunds == nil && list.data[2].amountRefunded == nil)
        #expect(list.data[3].refunds == nil && list.data[3].refunded == nil)
        #expect(throws: (any Error).self) { try StripeChargeList.decode(body: Data(#"{"object": "list", "data": [1]}"#.utf8)) }
        #expect(throws: (any Error).self) { try StripeCharge.decode(body: Data("not json".utf8)) }
        let payments = try StripeInvoicePaymentList.decode(
            body: Data(#"{"data": [{"id": "inpay", "amount_paid": "1e999", "payment": "pi_1", "status": "paid"}], "has_more": false}"#.utf8)
        )
        #expect(payments.data.first?.amountPaid == nil && payments.data.first?.paymentIntent == nil)
    }
}

/// From the latest invoice's payments and charges to a full refund of the period (`StripeRefundMapping`).
@Suite("Stripe refund mapping")
struct StripeRefundMappingTests {
    static let start = Date(timeIntervalSince1970: 1_780_000_000)
    static let end = Date(timeIntervalSince1970: 1_782_592_000)
    static let asOf = Date(timeIntervalSince1970: 1_781_000_000)
    static func at(_ offset: Double) -> Date { start.addingTimeInterval(offset) }

    static func payment(_ intent: String? = "pi_1", charge: String? = nil, paid: Int64? = 999, isDefault: Bool = true)
        -> StripeInvoicePayment
    {
        StripeInvoicePayment(
            id: "inpay_\(intent ?? charge ?? "x")", amountPaid: paid, currency: "usd", status: "paid", isDefault: isDefault,
            paymentType: intent != nil ? "payment_intent" : (charge != nil ? "charge" : "out_of_band_payment"),
            paymentIntent: intent, charge: charge)
    }

    static func charge(
        _ id: String = "ch_1", intent: String? = "pi_1", amount: Int64? = 999, refundedAmount: Int64? = 999, refunded: Bool? = true,
        currency: String = "usd", refunds: [StripeRefund]? = [StripeRefund(id: "re_1", amount: 999, created: at(100), status: "succeeded")],
        haveMore: Bool? = false
    ) -> StripeCharge {
        StripeCharge(
            id: id, amount: amount, amountRefunded: refundedAmount, refunded: refunded, currency: currency, paymentIntent: intent,
            refunds: refunds, refundsHaveMore: haveMore)
    }

    struct Row: Sendable, CustomTestStringConvertible {
        var name: String
        var payments: [StripePaidPayment]
        /// nil: no refund; "error: …": an error containing the text.
        var expected: Expected
        var testDescription: String { name }
    }

    enum Expected: Sendable {
        case none
        case refund(at: Date, amount: String?, currency: String, id: String)
        case error(String)
    }

    static let rows: [Row] = [
        Row(
            name: "full refund in USD: the latest succeeded refund's date, amount_refunded, the payment intent",
            payments: [
                StripePaidPayment(
                    payment: payment(),
                    charges: [
                        charge(refunds: [
                            StripeRefund(id: "re_a", amount: 500, created: at(100), status: "succeeded"),
                            StripeRefund(id: "re_b", amount: 499, created: at(300), status: "succeeded"),
                            StripeRefund(id: "re_failed", amount: 499, created: at(900), status: "failed"),
                            StripeRefund(id: "re_pending", amount: 1, created: at(950), status: "pending"),
                        ])
                    ])
            ],
            expected: .refund(at: at(300), amount: "9.99", currency: "USD", id: "pi_1")),
        Row(
            name: "full refund in JPY (no minor unit)",
            payments: [
                StripePaidPayment(payment: payment(paid: 1200), charges: [charge(amount: 1200, refundedAmount: 1200, currency: "jpy")])
            ],
            expected: .refund(at: at(100), amount: "1200", currency: "JPY", id: "pi_1")),
        Row(
            name: "full refund in KWD (three decimals)",
            payments: [
                StripePaidPayment(payment: payment(paid: 5125), charges: [charge(amount: 5125, refundedAmount: 5125, currency: "kwd")])
            ],
            expected: .refund(at: at(100), amount: "5.125", currency: "KWD", id: "pi_1")),
        Row(
            name: "a failed charge of the same intent is no refund, the succeeded one is",
            payments: [
                StripePaidPayment(
                    payment: payment(),
                    charges: [charge("ch_failed", refundedAmount: 0, refunded: false, refunds: []), charge("ch_ok")])
            ],
            expected: .refund(at: at(100), amount: "9.99", currency: "USD", id: "pi_1")),
        Row(
            name: "a charge payment (no intent) is keyed by the charge id",
            payments: [StripePaidPayment(payment: payment(nil, charge: "ch_7"), charges: [charge("ch_7", intent: nil)])],
            expected: .refund(at: at(100), amount: "9.99", currency: "USD", id: "ch_7")),
        Row(
            name: "refunded amount out of range: still a refund, price unknown",
            payments: [StripePaidPayment(payment: payment(), charges: [charge(refundedAmount: StripeMapping.maxUnitAmount + 1)])],
            expected: .refund(at: at(100), amount: nil, currency: "USD", id: "pi_1")),
        Row(
            name: "partial refund (proration, goodwill): no refund",
            payments: [StripePaidPayment(payment: payment(), charges: [charge(refundedAmount: 300, refunded: false)])],
            expected: .none),
        Row(
            name: "nothing refunded",
            payments: [StripePaidPayment(payment: payment(), charges: [charge(refundedAmount: 0, refunded: false, refunds: [])])],
            expected: .none),
        Row(
            name: "refunded missing with amount_refunded 0: nothing refunded",
            payments: [StripePaidPayment(payment: payment(), charges: [charge(refundedAmount: 0, refunded: nil)])], expected: .none),
        Row(
            name: "two payments, one fully refunded, one not: no revocation",
            payments: [
                StripePaidPayment(payment: payment("pi_1"), charges: [charge("ch_1", intent: "pi_1")]),
                StripePaidPayment(
                    payment: payment("pi_2", isDefault: false),
                    charges: [charge("ch_2", intent: "pi_2", refundedAmount: 0, refunded: false)]),
            ],
            expected: .none),
        Row(
            name: "an out-of-band payment: nothing says it was given back",
            payments: [StripePaidPayment(payment: payment(nil), charges: [])], expected: .none),
        Row(name: "no paid payment", payments: [], expected: .none),
        Row(
            name: "refunded missing with a refunded amount: cannot tell full from partial",
            payments: [StripePaidPayment(payment: payment(), charges: [charge(refunded: nil)])],
            expected: .error("without saying whether it was refunded in full")),
        Row(
            name: "refunded missing and amount_refunded unreadable: cannot tell",
            payments: [StripePaidPayment(payment: payment(), charges: [charge(refundedAmount: nil, refunded: nil)])],
            expected: .error("without saying whether it was refunded in full")),
        Row(
            name: "full refund without a dated succeeded refund: never a guessed date",
            payments: [
                StripePaidPayment(
                    payment: payment(),
                    charges: [
                        charge(refunds: [
                            StripeRefund(id: "re_1", amount: 999, created: nil, status: "succeeded"),
                            StripeRefund(id: "re_2", amount: 999, created: at(5), status: "pending"),
                        ])
                    ])
            ],
            expected: .error("no succeeded refund states when")),
        Row(
            name: "full refund with the refunds list missing",
            payments: [StripePaidPayment(payment: payment(), charges: [charge(refunds: nil, haveMore: nil)])],
            expected: .error("refunds list is missing or incomplete")),
        Row(
            name: "full refund with the refunds list cut (has_more)",
            payments: [StripePaidPayment(payment: payment(), charges: [charge(haveMore: true)])],
            expected: .error("refunds list is missing or incomplete")),
    ]

    @Test("a period is refunded only when every paid payment's charge is refunded in full, dated by a succeeded refund", arguments: rows)
    func table(_ row: Row) throws {
        let result = StripeRefundMapping.periodRefund(subscription: "sub_1", payments: row.payments)
        switch row.expected {
        case .none:
            #expect(try result.get() == nil)
        case .refund(let at, let amount, let currency, let id):
            let refund = try #require(try result.get())
            #expect(refund.refundedAt == at && refund.transactionID == id)
            #expect(refund.price == amount.map { Money(amount: Decimal(string: $0)!, currency: currency) })
        case .error(let text):
            guard case .failure(let error) = result else {
                Issue.record("expected an error, got \(result)")
                return
            }
            #expect(error.origin == .stripe && error.kind == .fetch)
            #expect(error.message.contains(text) && error.message.contains("sub_1"), "\(error.message)")
        }
    }

    static func subscription(_ status: String, invoice: StripeInvoice?) -> StripeSubscription {
        StripeSubscription(
            id: "sub_1", status: status, livemode: true,
            items: [
                StripeSubscriptionItem(
                    id: "si_1", currentPeriodStart: start, currentPeriodEnd: end,
                    price: StripePrice(id: "price_1", product: "prod_1", unitAmount: 999, currency: "usd"))
            ],
            latestInvoice: invoice)
    }

    @Test("only active, trialing and past_due subscriptions with a known latest invoice that paid something are asked about")
    func whatIsAsked() {
        let paid = StripeInvoice(id: "in_1", amountPaid: 999, currency: "usd")
        for status in ["active", "trialing", "past_due"] {
            #expect(StripeRefundMapping.invoiceToAsk(Self.subscription(status, invoice: paid)) == paid, "\(status)")
        }
        for status in ["canceled", "unpaid", "incomplete", "incomplete_expired", "paused", "new_status"] {
            #expect(StripeRefundMapping.invoiceToAsk(Self.subscription(status, invoice: paid)) == nil, "\(status)")
        }
        #expect(StripeRefundMapping.invoiceToAsk(Self.subscription("active", invoice: nil)) == nil)
        #expect(StripeRefundMapping.invoiceToAsk(Self.subscription("trialing", invoice: StripeInvoice(id: "in_t", amountPaid: 0))) == nil)
        #expect(StripeRefundMapping.invoiceToAsk(Self.subscription("active", invoice: StripeInvoice(id: "", amountPaid: 9))) == nil)
        for reason in ["subscription_create", "subscription_cycle"] {
            let invoice = StripeInvoice(id: "in_r", amountPaid: 9, billingReason: reason)
            #expect(StripeRefundMapping.invoiceToAsk(Self.subscription("active", invoice: invoice)) == invoice, "\(reason)")
        }
        for reason in ["subscription_update", "manual", "subscription_threshold"] {
            let invoice = StripeInvoice(id: "in_r", amountPaid: 9, billingReason: reason)
            #expect(
                StripeRefundMapping.invoiceToAsk(Self.subscription("active", invoice: invoice)) == nil,
                "\(reason): not the period's own invoice")
        }
        let plain = StripeInvoice(id: "in_2", expanded: false, status: nil)
        #expect(StripeRefundMapping.invoiceToAsk(Self.subscription("active", invoice: plain)) == plain)
        #expect(StripeRefundMapping.isPaid(StripeRefundMappingTests.payment(paid: 0)) == false)
        #expect(StripeRefundMapping.isPaid(StripeRefundMappingTests.payment(paid: nil)) == true, "unstated amount: asked")
        var open = StripeRefundMappingTests.payment()
        open.status = "open"
        #expect(StripeRefundMapping.isPaid(open) == false)
    }

    @Test(
        "a full refund makes the purchase refunded at the refund (paid price, refund keyed by pi_); another subscription's refund leaves the facts as they were"
    )
    func applied() throws {
        let facts = try StripeMapping.storeFacts(Self.subscription("active", invoice: nil)).get()
        let refund = StripePeriodRefund(
            refundedAt: Self.at(100), price: Money(amount: Decimal(string: "9.99")!, currency: "usd"), transactionID: "pi_1")
        let refunded = StripeRefundMapping.apply(refund, subscriptionID: "sub_1", to: facts)
        let purchase = try #require(refunded.first?.purchase)
        #expect(purchase.refundedAt == Self.at(100) && purchase.refundTransactionID == "pi_1")
        guard case .known(let judged) = Decision.judge(purchase, asOf: Self.asOf) else {
            Issue.record("a stated refund is judged")
            return
        }
        #expect(!judged.entitled && judged.status == .refunded)
        let price = FinancePrice.of(purchase, for: .refund)
        #expect(price.amount == Decimal(string: "9.99") && price.currency == "USD" && price.basis == .paid)
        #expect(SeenRefund.of([purchase], asOf: Self.asOf).map(\.transactionID) == ["pi_1"])
        #expect(StripeRefundMapping.apply(refund, subscriptionID: "sub_other", to: facts) == facts)
        #expect(try Decision.judge(#require(facts.first?.purchase), asOf: Self.asOf) != Decision.judge(purchase, asOf: Self.asOf))
    }
}
