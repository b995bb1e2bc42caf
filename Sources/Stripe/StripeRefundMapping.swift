import Foundation
import SubreconCore

// From a subscription's latest invoice, its payments and their charges to a full refund of the current period
// (CONTRACT "Sources and the decision", "Finance figures"). Pure; imports Foundation and SubreconCore only (`scripts/fuzz` compiles it into the fuzz target).

/// One paid payment of a latest invoice (`status: paid`, `amount_paid` > 0 or unknown) and the charges Stripe lists
/// for it (empty when the payment names neither a payment intent nor a charge, e.g. an out-of-band payment).
public struct StripePaidPayment: Sendable, Hashable {
    public var payment: StripeInvoicePayment
    public var charges: [StripeCharge]

    public init(payment: StripeInvoicePayment, charges: [StripeCharge]) {
        self.payment = payment
        self.charges = charges
    }
}

/// A full refund of what was paid for a subscription's current period.
public struct StripePeriodRefund: Sendable, Hashable {
    /// The latest `created` of the refunded charges' `succeeded` refunds.
    public var refundedAt: Date
    /// What was paid for the period and given back: the charges' `amount_refunded` in minor units of their
    /// currency; nil when out of range, the currency is unknown, or the charges are in several currencies.
    public var price: Money?
    /// The refunded payment intent (`pi_…`), else the charge (`ch_…`), of the invoice's default payment.
    public var transactionID: String

    public init(refundedAt: Date, price: Money?, transactionID: String) {
        self.refundedAt = refundedAt
        self.price = price
        self.transactionID = transactionID
    }
}

/// Which charge lookup a paid invoice payment needs.
public enum StripeChargeLookup: Sendable, Hashable {
    /// `GET /v1/charges?payment_intent=…` (`payment.type: payment_intent`, or any payment naming one).
    case paymentIntent(String)
    /// `GET /v1/charges/{id}` (`payment.type: charge`).
    case charge(String)
}

/// When a Stripe subscription's current period counts as refunded.
///
/// Asked only for a subscription whose status entitles or is a billing issue (`active`, `trialing`, `past_due`) and
/// whose `latest_invoice` is known; an expanded invoice with `amount_paid` 0 (a trial, a free period) asks nothing
/// more, and so does an expanded invoice whose `billing_reason` is not a period's own (`subscription_create`,
/// `subscription_cycle`): refunding a plan change's proration invoice does not give back the period (a plain id
/// states no reason and is asked about). The invoice's payments that are `paid` with `amount_paid` > 0 (or unstated) are the period's payments;
/// each one's charges are read.
///
/// | the period's paid payments                                          | result                                      |
/// |---------------------------------------------------------------------|---------------------------------------------|
/// | none                                                                | no refund                                   |
/// | each has a charge with `refunded: true`                             | full refund: `refundedAt` = the latest `created` of their `succeeded` refunds, `price` = the sum of `amount_refunded` |
/// | some charge `refunded: false` (partial refund: proration, goodwill) | no refund: the tier logic ignores partial refunds; the facts are untouched |
/// | a payment without any charge (out of band)                          | no refund (nothing says it was given back)  |
/// | a charge with `refunded` missing or not a boolean and `amount_refunded` not 0 | error for the user: full cannot be told from partial |
/// | a fully refunded charge without a dated `succeeded` refund, or whose refunds list is still cut or missing after `GET /v1/refunds` | error for the user: never a guessed date |
public enum StripeRefundMapping {
    /// The statuses whose latest invoice is looked at.
    public static let statusesAsked: Set<String> = ["active", "trialing", "past_due"]
    /// The `billing_reason`s of an invoice that pays for a period of its own.
    public static let periodBillingReasons: Set<String> = ["subscription_create", "subscription_cycle"]

    /// The latest invoice whose payments are asked about; nil when nothing more is asked.
    public static func invoiceToAsk(_ subscription: StripeSubscription) -> StripeInvoice? {
        guard let status = subscription.status, statusesAsked.contains(status), let invoice = subscription.latestInvoice,
            let id = invoice.id, !id.isEmpty
        else { return nil }
        if invoice.expanded, invoice.amountPaid == 0 { return nil }
        if invoice.expanded, let reason = invoice.billingReason, !periodBillingReasons.contains(reason) { return nil }
        return invoice
    }

    /// The payments of an expanded invoice when its `payments` list is complete; nil when they must be listed
    /// (`GET /v1/invoice_payments?invoice=…`).
    public static func statedPayments(of invoice: StripeInvoice) -> [StripeInvoicePayment]? {
        guard invoice.expanded, let list = invoice.payments, list.hasMore == false else { return nil }
        return list.data
    }

    /// Whether an invoice payment paid something for the period: `paid`, with `amount_paid` > 0 or unstated.
    public static func isPaid(_ payment: StripeInvoicePayment) -> Bool {
        payment.status == "paid" && (payment.amountPaid.map { $0 > 0 } ?? true)
    }

    /// The charge lookup of a paid payment; nil when it names neither a payment intent nor a charge.
    public static func chargeLookup(_ payment: StripeInvoicePayment) -> StripeChargeLookup? {
        if payment.paymentType != "charge", let intent = payment.paymentIntent, !intent.isEmpty {
            return .paymentIntent(intent)
        }
        if let charge = payment.charge, !charge.isEmpty { return .charge(charge) }
        if let intent = payment.paymentIntent, !intent.isEmpty { return .paymentIntent(intent) }
        return nil
    }

    /// The full refund of the period the paid payments paid for, nil when it is not (fully) refunded; an error
    /// when the charges do not allow telling (see the table above). `name` is the subscription id for messages.
    public static func periodRefund(subscription name: String, payments: [StripePaidPayment]) -> Result<StripePeriodRefund?, SourceError> {
        func failure(_ message: String) -> Result<StripePeriodRefund?, SourceError> {
            .failure(SourceError(origin: .stripe, kind: .fetch, message: "Stripe subscription \(String(name.prefix(80))): \(message)"))
        }
        guard !payments.isEmpty else { return .success(nil) }
        // The default payment first: its id keys the refund.
        let ordered = payments.enumerated().sorted {
            ($0.element.payment.isDefault == true ? 0 : 1, $0.offset) < ($1.element.payment.isDefault == true ? 0 : 1, $1.offset)
        }.map(\.element)
        var refunded: [(charge: StripeCharge, payment: StripeInvoicePayment, at: Date)] = []
        var everyPaymentRefunded = true
        for paid in ordered {
            var full: (StripeCharge, Date)?
            for charge in paid.charges {
                let chargeName = charge.id.map { String($0.prefix(80)) } ?? "without an id"
                switch charge.refunded {
                case false?:
                    continue
                case nil:
                    if charge.amountRefunded == 0 { continue }
                    return failure("charge \(chargeName) states a refunded amount without saying whether it was refunded in full")
                case true?:
                    if charge.refunds == nil || charge.refundsHaveMore != false {
                        return failure("charge \(chargeName) is refunded, but its refunds list is missing or incomplete")
                    }
                    let succeeded = (charge.refunds ?? []).filter { $0.status == "succeeded" }
                    if succeeded.contains(where: \.createdUnusable) {
                        return failure("charge \(chargeName) has a refund whose created is not a Unix time in 1970...2200")
                    }
                    guard let latest = succeeded.compactMap(\.created).max() else {
                        return failure("charge \(chargeName) is refunded, but no succeeded refund states when")
                    }
                    if full.map({ latest > $0.1 }) ?? true { full = (charge, latest) }
                }
            }
            if let (charge, at) = full {
                refunded.append((charge, paid.payment, at))
            } else {
                everyPaymentRefunded = false
            }
        }
        guard everyPaymentRefunded, let first = refunded.first, let refundedAt = refunded.map(\.at).max() else {
            return .success(nil)
        }
        let ids = [first.charge.paymentIntent, first.payment.paymentIntent, first.charge.id, first.payment.charge]
        guard let transactionID = ids.compactMap({ $0 }).first(where: { !$0.isEmpty }) else {
            return failure("a refunded charge names neither a payment intent nor a charge id")
        }
        return .success(StripePeriodRefund(refundedAt: refundedAt, price: price(of: refunded.map(\.charge)), transactionID: transactionID))
    }

    /// The sum of `amount_refunded` of `charges` in minor units of their one currency; nil when any amount is
    /// missing or outside `0...StripeMapping.maxUnitAmount`, the currency is unknown, or they differ.
    public static func price(of charges: [StripeCharge]) -> Money? {
        guard let currency = charges.first?.currency, let exponent = StripeCurrency.exponent(currency) else { return nil }
        var total = Decimal(0)
        for charge in charges {
            guard let amount = charge.amountRefunded, (0...StripeMapping.maxUnitAmount).contains(amount),
                charge.currency?.lowercased() == currency.lowercased()
            else { return nil }
            total += Decimal(amount)
        }
        return StripeCurrency.money(minorUnits: total, currency: currency, exponent: exponent)
    }

    /// `facts` with the refund stated on each fact of subscription `subscriptionID` (`lookupID`): `refundedAt`,
    /// `price` (what was paid, CONTRACT "Finance figures") and `refundTransactionID`. The core judges the period refunded when the
    /// refund is at or after the period's start.
    public static func apply(_ refund: StripePeriodRefund, subscriptionID: String, to facts: [StoreFact]) -> [StoreFact] {
        facts.map { fact in
            guard fact.lookupID == subscriptionID else { return fact }
            var fact = fact
            fact.purchase.refundedAt = refund.refundedAt
            fact.purchase.price = refund.price
            fact.purchase.refundTransactionID = refund.transactionID
            return fact
        }
    }
}
