import Foundation
import SubreconCore

// What Stripe says was paid and refunded for a subscription's latest invoice (API version `2025-03-31.basil`):
// the invoice (`latest_invoice`, expanded with `payments`), its invoice payments (`GET /v1/invoice_payments`,
// `"object": "invoice_payment"`) and their charges (`GET /v1/charges?payment_intent=…`, `GET /v1/charges/{id}`,
// `refunds` expanded). From this version on a charge or payment intent names no invoice and an invoice names no
// charge: the invoice payment is the only link.
//
// Decoded leniently like `StripeWire.swift`: every field optional, a missing, null or unparsable field is nil
// (unknown), never a default; numbers through `lenientInteger` (no trap on huge, fractional or string numbers),
// timestamps through `stripeTimestamp` (strict: a sent but unusable `created` is flagged, never a date). Only a
// body that is not JSON, a list without `data` or an element that is not an object fails the decode.
//
// This file imports Foundation and SubreconCore only: `scripts/fuzz` compiles it into the fuzz target.

/// A subscription's `latest_invoice`: a plain id (`in_…`), or an expanded invoice (`expand[]=latest_invoice.payments`).
public struct StripeInvoice: Decodable, Sendable, Hashable {
    public var id: String?
    /// False when Stripe answered a plain id (nothing else is known: the payments must be listed).
    public var expanded: Bool
    /// `paid`, `open`, `draft`, `void`, `uncollectible`.
    public var status: String?
    /// Minor units of `currency`.
    public var amountPaid: Int64?
    public var amountDue: Int64?
    public var total: Int64?
    public var currency: String?
    /// Why the invoice was made: `subscription_create`, `subscription_cycle` (a period's own invoice),
    /// `subscription_update` (a plan change, often a proration), `manual`, ...
    public var billingReason: String?
    /// The invoice's payments when `payments` was expanded and readable; nil otherwise (then listed by
    /// `GET /v1/invoice_payments?invoice=…`).
    public var payments: StripeList<StripeInvoicePayment>?

    public init(
        id: String?, expanded: Bool = true, status: String? = "paid", amountPaid: Int64? = nil, amountDue: Int64? = nil,
        total: Int64? = nil, currency: String? = nil, billingReason: String? = nil,
        payments: StripeList<StripeInvoicePayment>? = nil
    ) {
        self.id = id
        self.expanded = expanded
        self.status = status
        self.amountPaid = amountPaid
        self.amountDue = amountDue
        self.total = total
        self.currency = currency
        self.billingReason = billingReason
        self.payments = payments
    }

    enum CodingKeys: String, CodingKey {
        case id, status, total, currency, payments
        case amountPaid = "amount_paid"
        case amountDue = "amount_due"
        case billingReason = "billing_reason"
    }

    public init(from decoder: any Decoder) throws {
        if let text = try? decoder.singleValueContainer().decode(String.self) {
            self.init(id: text, expanded: false, status: nil)
            return
        }
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            id: container.lenientString(.id), expanded: true, status: container.lenientString(.status),
            amountPaid: container.lenientInteger(.amountPaid), amountDue: container.lenientInteger(.amountDue),
            total: container.lenientInteger(.total), currency: container.lenientString(.currency),
            billingReason: container.lenientString(.billingReason),
            payments: (try? container.decodeIfPresent(StripeList<StripeInvoicePayment>.self, forKey: .payments)) ?? nil)
    }
}

/// `GET /v1/invoice_payments?invoice=…`: `{"object": "list", "data": [invoice_payment…], "has_more": …}`.
public typealias StripeInvoicePaymentList = StripeList<StripeInvoicePayment>

/// One payment of an invoice (`"object": "invoice_payment"`).
public struct StripeInvoicePayment: Decodable, Sendable, Hashable {
    public var id: String?
    /// The invoice id, or the `id` of an expanded invoice.
    public var invoice: String?
    /// Minor units of `currency` actually paid; nil while not paid or unknown.
    public var amountPaid: Int64?
    public var amountRequested: Int64?
    public var currency: String?
    /// `paid`, `open` or `canceled`.
    public var status: String?
    public var isDefault: Bool?
    public var livemode: Bool?
    /// `payment.type`: `payment_intent`, `charge`, or another kind (`out_of_band_payment`, …).
    public var paymentType: String?
    /// `payment.payment_intent` (`pi_…`), or the `id` of an expanded payment intent.
    public var paymentIntent: String?
    /// `payment.charge` (`ch_…`), or the `id` of an expanded charge.
    public var charge: String?

    public init(
        id: String?, invoice: String? = nil, amountPaid: Int64?, amountRequested: Int64? = nil, currency: String?,
        status: String?, isDefault: Bool? = true, livemode: Bool? = true, paymentType: String?, paymentIntent: String? = nil,
        charge: String? = nil
    ) {
        self.id = id
        self.invoice = invoice
        self.amountPaid = amountPaid
        self.amountRequested = amountRequested
        self.currency = currency
        self.status = status
        self.isDefault = isDefault
        self.livemode = livemode
        self.paymentType = paymentType
        self.paymentIntent = paymentIntent
        self.charge = charge
    }

    enum CodingKeys: String, CodingKey {
        case id, invoice, currency, status, livemode, payment
        case amountPaid = "amount_paid"
        case amountRequested = "amount_requested"
        case isDefault = "is_default"
    }

    enum PaymentKeys: String, CodingKey {
        case type, charge
        case paymentIntent = "payment_intent"
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = container.lenientString(.id)
        invoice = container.lenientID(.invoice)
        amountPaid = container.lenientInteger(.amountPaid)
        amountRequested = container.lenientInteger(.amountRequested)
        currency = container.lenientString(.currency)
        status = container.lenientString(.status)
        isDefault = container.lenientBool(.isDefault)
        livemode = container.lenientBool(.livemode)
        if let payment = try? container.nestedContainer(keyedBy: PaymentKeys.self, forKey: .payment) {
            paymentType = payment.lenientString(.type)
            paymentIntent = payment.lenientID(.paymentIntent)
            charge = payment.lenientID(.charge)
        }
    }

    /// Decodes a list body after `SourceText.sanitizedJSON`.
    public static func decodeList(body: Data) throws -> StripeInvoicePaymentList {
        try StripeInvoicePaymentList.decode(body: body)
    }
}

/// `GET /v1/charges?payment_intent=…`: `{"object": "list", "data": [charge…], "has_more": …}`.
public typealias StripeChargeList = StripeList<StripeCharge>

/// One charge (`"object": "charge"`) with its `refunds` expanded.
public struct StripeCharge: Decodable, Sendable, Hashable {
    public var id: String?
    /// Minor units of `currency`.
    public var amount: Int64?
    /// Minor units refunded so far (partial refunds included).
    public var amountRefunded: Int64?
    /// Stripe's own "fully refunded"; nil when missing or not a boolean (then a refunded amount cannot be judged).
    public var refunded: Bool?
    public var currency: String?
    /// The payment intent id (`pi_…`), or the `id` of an expanded one.
    public var paymentIntent: String?
    public var livemode: Bool?
    /// `succeeded`, `pending` or `failed`.
    public var status: String?
    /// The refunds of the expanded `refunds` list; nil when missing, not expanded or not a list.
    public var refunds: [StripeRefund]?
    /// `refunds.has_more`; nil when not stated.
    public var refundsHaveMore: Bool?

    public init(
        id: String?, amount: Int64?, amountRefunded: Int64?, refunded: Bool?, currency: String?, paymentIntent: String? = nil,
        livemode: Bool? = true, status: String? = "succeeded", refunds: [StripeRefund]?, refundsHaveMore: Bool? = false
    ) {
        self.id = id
        self.amount = amount
        self.amountRefunded = amountRefunded
        self.refunded = refunded
        self.currency = currency
        self.paymentIntent = paymentIntent
        self.livemode = livemode
        self.status = status
        self.refunds = refunds
        self.refundsHaveMore = refundsHaveMore
    }

    enum CodingKeys: String, CodingKey {
        case id, amount, refunded, currency, livemode, status, refunds
        case amountRefunded = "amount_refunded"
        case paymentIntent = "payment_intent"
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = container.lenientString(.id)
        amount = container.lenientInteger(.amount)
        amountRefunded = container.lenientInteger(.amountRefunded)
        refunded = container.lenientBool(.refunded)
        currency = container.lenientString(.currency)
        paymentIntent = container.lenientID(.paymentIntent)
        livemode = container.lenientBool(.livemode)
        status = container.lenientString(.status)
        if let list = container.embeddedList(.refunds, of: StripeRefund.self) { (refunds, refundsHaveMore) = list }
    }

    /// Decodes one charge body after `SourceText.sanitizedJSON`.
    public static func decode(body: Data) throws -> StripeCharge {
        try JSONDecoder().decode(StripeCharge.self, from: SourceText.sanitizedJSON(body))
    }
}

/// One refund of a charge (`"object": "refund"`).
public struct StripeRefund: Decodable, Sendable, Hashable {
    public var id: String?
    public var amount: Int64?
    public var created: Date?
    /// True when `created` was sent but is not a whole Unix time in 1970...2200 (CONTRACT "Hostile answers and bounded work"): never a date, never
    /// read as absent.
    public var createdUnusable = false
    /// `pending`, `requires_action`, `succeeded`, `failed` or `canceled`.
    public var status: String?

    public init(id: String?, amount: Int64?, created: Date?, status: String?) {
        self.id = id
        self.amount = amount
        self.created = created
        self.status = status
    }

    enum CodingKeys: String, CodingKey { case id, amount, created, status }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = container.lenientString(.id)
        amount = container.lenientInteger(.amount)
        let stamp = container.stripeTimestamp(.created)
        created = stamp.date
        createdUnusable = stamp == .unusable
        status = container.lenientString(.status)
    }
}
