import Foundation

// The simulated Stripe's invoices, invoice payments, charges and refunds (API version `2025-03-31.basil`: a charge
// names no invoice, an invoice names no charge; the invoice payment links them), and how they are written.

/// One refund of a simulated charge.
public struct SimulatedStripeRefund: Sendable, Hashable {
    public var id: String
    /// Minor units.
    public var amount: Int64
    /// nil: the `created` key is left out (a hostile answer).
    public var created: Date?
    /// `succeeded`, `pending`, `failed`, `canceled`, `requires_action`.
    public var status: String

    public init(id: String, amount: Int64, created: Date?, status: String = "succeeded") {
        self.id = id
        self.amount = amount
        self.created = created
        self.status = status
    }
}

/// One simulated charge; served by `GET /v1/charges?payment_intent=…` and `GET /v1/charges/{id}`.
public struct SimulatedStripeCharge: Sendable, Hashable {
    public var id: String
    /// nil: a charge made without a payment intent (`payment.type: charge`).
    public var paymentIntentID: String?
    public var amount: Int64
    public var amountRefunded: Int64
    /// nil: the `refunded` key is left out (a hostile answer).
    public var refunded: Bool?
    public var currency: String
    public var status: String
    public var created: Date
    /// nil: the `refunds` key is left out even when expanded (a hostile answer).
    public var refunds: [SimulatedStripeRefund]?
    public var livemode: Bool

    public init(
        id: String, paymentIntentID: String?, amount: Int64, amountRefunded: Int64 = 0, refunded: Bool? = nil, omitsRefunded: Bool = false,
        currency: String = "usd", status: String = "succeeded", created: Date, refunds: [SimulatedStripeRefund]? = [],
        livemode: Bool = true
    ) {
        self.id = id
        self.paymentIntentID = paymentIntentID
        self.amount = amount
        self.amountRefunded = amountRefunded
        // Stripe's own rule unless told: refunded in full when everything captured was given back.
        self.refunded = omitsRefunded ? nil : (refunded ?? (amountRefunded >= amount && amount > 0))
        self.currency = currency
        self.status = status
        self.created = created
        self.refunds = refunds
        self.livemode = livemode
    }
}

/// What an invoice payment paid with.
public enum SimulatedStripePaymentTarget: Sendable, Hashable {
    /// `payment: {type: "payment_intent", payment_intent: "pi_…"}`.
    case paymentIntent(String)
    /// `payment: {type: "charge", charge: "ch_…"}`.
    case charge(String)
    /// `payment: {type: "out_of_band_payment"}`: no charge.
    case outOfBand
}

/// One payment of a simulated invoice (`"object": "invoice_payment"`).
public struct SimulatedStripeInvoicePayment: Sendable, Hashable {
    public var id: String
    public var target: SimulatedStripePaymentTarget
    /// nil: `amount_paid` is `null` (an `open` or `canceled` payment).
    public var amountPaid: Int64?
    public var amountRequested: Int64
    public var currency: String
    /// `paid`, `open` or `canceled`.
    public var status: String
    public var isDefault: Bool

    public init(
        id: String, target: SimulatedStripePaymentTarget, amountPaid: Int64?, amountRequested: Int64? = nil,
        currency: String = "usd", status: String = "paid", isDefault: Bool = true
    ) {
        self.id = id
        self.target = target
        self.amountPaid = amountPaid
        self.amountRequested = amountRequested ?? amountPaid ?? 0
        self.currency = currency
        self.status = status
        self.isDefault = isDefault
    }
}

/// A simulated subscription's latest invoice; served expanded (`expand[]=…latest_invoice.payments`) on the
/// subscription calls and through `GET /v1/invoice_payments?invoice=…`.
public struct SimulatedStripeInvoice: Sendable, Hashable {
    public var id: String
    public var amountDue: Int64
    public var amountPaid: Int64
    public var currency: String
    public var status: String
    /// `subscription_cycle` unless told.
    public var billingReason: String
    public var created: Date
    public var payments: [SimulatedStripeInvoicePayment]
    /// false: `latest_invoice` is always written as the id, even when expansion is asked (the client must list
    /// the payments).
    public var expandable: Bool

    public init(
        id: String, amountDue: Int64, amountPaid: Int64? = nil, currency: String = "usd", status: String = "paid",
        billingReason: String = "subscription_cycle", created: Date, payments: [SimulatedStripeInvoicePayment], expandable: Bool = true
    ) {
        self.id = id
        self.amountDue = amountDue
        self.amountPaid = amountPaid ?? amountDue
        self.currency = currency
        self.status = status
        self.billingReason = billingReason
        self.created = created
        self.payments = payments
        self.expandable = expandable
    }

    /// An invoice paid in full by one payment intent.
    public static func paid(id: String, amount: Int64, currency: String = "usd", paymentIntent: String, created: Date)
        -> SimulatedStripeInvoice
    {
        SimulatedStripeInvoice(
            id: id, amountDue: amount, currency: currency, created: created,
            payments: amount == 0
                ? []
                : [
                    SimulatedStripeInvoicePayment(
                        id: "inpay_\(id.dropFirst(3))", target: .paymentIntent(paymentIntent), amountPaid: amount, currency: currency)
                ])
    }
}

enum StripeWireValues {
    static func seconds(_ date: Date?) -> Any { date.map { Int64($0.timeIntervalSince1970.rounded(.down)) } ?? NSNull() }

    static func invoice(
        _ invoice: SimulatedStripeInvoice, subscriptionID: String, customerID: String, livemode: Bool, withPayments: Bool
    ) -> [String: Any] {
        var object: [String: Any] = [
            "id": invoice.id, "object": "invoice", "amount_due": invoice.amountDue, "amount_paid": invoice.amountPaid,
            "amount_remaining": max(0, invoice.amountDue - invoice.amountPaid), "total": invoice.amountDue,
            "subtotal": invoice.amountDue, "currency": invoice.currency, "customer": customerID, "status": invoice.status,
            "created": seconds(invoice.created), "livemode": livemode, "billing_reason": invoice.billingReason,
            "collection_method": "charge_automatically",
            "parent": [
                "type": "subscription_details", "quote_details": NSNull(),
                "subscription_details": ["subscription": subscriptionID, "metadata": [String: String]()],
            ],
        ]
        if withPayments {
            object["payments"] = list(
                invoice.payments.map { payment($0, invoiceID: invoice.id, livemode: livemode, created: invoice.created) },
                url: "/v1/invoice_payments")
        }
        return object
    }

    static func payment(_ payment: SimulatedStripeInvoicePayment, invoiceID: String, livemode: Bool, created: Date) -> [String: Any] {
        var target: [String: Any]
        switch payment.target {
        case .paymentIntent(let id): target = ["type": "payment_intent", "payment_intent": id]
        case .charge(let id): target = ["type": "charge", "charge": id]
        case .outOfBand: target = ["type": "out_of_band_payment"]
        }
        return [
            "id": payment.id, "object": "invoice_payment", "amount_paid": payment.amountPaid.map { $0 as Any } ?? NSNull(),
            "amount_requested": payment.amountRequested, "currency": payment.currency, "invoice": invoiceID,
            "is_default": payment.isDefault, "livemode": livemode, "payment": target, "status": payment.status,
            "created": seconds(created),
            "status_transitions": ["paid_at": payment.status == "paid" ? seconds(created) : NSNull(), "canceled_at": NSNull()],
        ]
    }

    static func charge(_ charge: SimulatedStripeCharge, customerID: String?, withRefunds: Bool) -> [String: Any] {
        var object: [String: Any] = [
            "id": charge.id, "object": "charge", "amount": charge.amount, "amount_captured": charge.amount,
            "amount_refunded": charge.amountRefunded, "captured": true, "paid": charge.status == "succeeded",
            "currency": charge.currency, "customer": customerID.map { $0 as Any } ?? NSNull(),
            "payment_intent": charge.paymentIntentID.map { $0 as Any } ?? NSNull(), "status": charge.status,
            "created": seconds(charge.created), "livemode": charge.livemode, "disputed": false, "metadata": [String: String](),
        ]
        if let refunded = charge.refunded { object["refunded"] = refunded }
        if withRefunds, let refunds = charge.refunds {
            // An expanded sublist holds the newest 10; `has_more` says there are more.
            let newest = newestFirst(refunds)
            object["refunds"] = list(
                newest.prefix(10).map { refund($0, of: charge) }, url: "/v1/charges/\(charge.id)/refunds", hasMore: newest.count > 10)
        }
        return object
    }

    /// Refunds newest first (undated ones last), ties in reverse order given.
    static func newestFirst(_ refunds: [SimulatedStripeRefund]) -> [SimulatedStripeRefund] {
        refunds.enumerated().sorted {
            let (a, b) = ($0.element.created ?? .distantPast, $1.element.created ?? .distantPast)
            return a != b ? a > b : $0.offset > $1.offset
        }.map(\.element)
    }

    static func refund(_ refund: SimulatedStripeRefund, of charge: SimulatedStripeCharge) -> [String: Any] {
        var encoded: [String: Any] = [
            "id": refund.id, "object": "refund", "amount": refund.amount, "charge": charge.id, "currency": charge.currency,
            "payment_intent": charge.paymentIntentID.map { $0 as Any } ?? NSNull(), "status": refund.status,
            "reason": NSNull(), "metadata": [String: String](),
        ]
        if let created = refund.created { encoded["created"] = seconds(created) }
        return encoded
    }

    static func list(_ data: [[String: Any]], url: String, hasMore: Bool = false) -> [String: Any] {
        ["object": "list", "data": data, "has_more": hasMore, "url": url]
    }
}
