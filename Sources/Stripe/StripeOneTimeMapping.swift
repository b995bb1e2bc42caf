import Foundation
import SubreconCore

// From a Stripe Checkout Session to the core's facts for one-time prices (CONTRACT "Sources and the decision"). Pure; Foundation and
// SubreconCore only (`scripts/fuzz` compiles it into the fuzz target).

/// How a customer's paid one-time prices become non-expiring `StoreFact`s.
///
/// | session                                                        | facts                                        |
/// |----------------------------------------------------------------|----------------------------------------------|
/// | `mode` `subscription`/`setup`, `status` not `complete`          | none (the subscription is read as one)        |
/// | `payment_status` `unpaid` or `no_payment_required`              | none (nothing was paid)                       |
/// | `mode` `payment`, `complete`, `paid`                            | one per line item whose `price.type` is `one_time` |
/// | `mode`, `status` or `payment_status` missing; an unusable `created`; line items missing or cut; a line item without a price id or `price.type` | error (fetch) for the user |
///
/// Each fact is `kind: .nonExpiring` (entitles without an end), `productID` the price's product (`prod_…`) with the
/// price id (`price_…`) as alternate, `purchaseDate` the session's `created`, `isSandbox` `!livemode`,
/// `storeTransactionID` the payment intent (else the session id), `price` the line's `amount_total`, `buyer` the
/// session's `metadata.user_id`, else its `client_reference_id`, else its expanded customer's `metadata.user_id`
/// (a customer asked for expanded that came as a bare id: the buyer is unknown, error for the user). A refund in full
/// of the payment (`StripePeriodRefund`, by the same rules as a subscription's period) sets `refundedAt`: a refunded
/// one-time purchase never entitles.
public enum StripeOneTimeMapping {
    /// Whether the session paid for something that may hold a one-time price; an error when it does not say.
    public static func isPaidPayment(_ session: StripeCheckoutSession) -> Result<Bool, SourceError> {
        let name = String((session.id ?? "without an id").prefix(80))
        guard let mode = session.mode, let status = session.status, let paid = session.paymentStatus else {
            return .failure(error("Stripe checkout session \(name) does not state its mode, status and payment status"))
        }
        return .success(mode == "payment" && status == "complete" && paid == "paid")
    }

    /// The facts of one paid session (`isPaidPayment`), with its refund in full when Stripe states one.
    public static func storeFacts(_ session: StripeCheckoutSession, refund: StripePeriodRefund?) -> Result<[StoreFact], SourceError> {
        guard let id = session.id, !id.isEmpty else { return .failure(error("Stripe checkout session without an id")) }
        let name = String(id.prefix(80))
        if let field = session.unusableDates.first {
            return .failure(error("Stripe checkout session \(name) states a \(field) that is not a Unix time in 1970...2200"))
        }
        guard let items = session.lineItems, session.lineItemsHaveMore == false else {
            return .failure(error("Stripe checkout session \(name) lists only part of its line items"))
        }
        let buyer: Buyer
        do { buyer = try session.statedBuyer.buyer(of: "checkout session \(name)").get() } catch { return .failure(error) }
        let intent = session.paymentIntent.flatMap { $0.isEmpty ? nil : $0 }
        var facts: [StoreFact] = []
        for item in items {
            guard let priceID = item.price?.id, !priceID.isEmpty, let type = item.price?.type else {
                return .failure(error("Stripe checkout session \(name) has a line item without a price id or price type"))
            }
            guard type == "one_time" else { continue }
            let productID = item.price?.product.flatMap { $0.isEmpty ? nil : $0 }
            var purchase = PurchaseFact(
                origin: .stripe, productID: productID ?? priceID, store: .stripe, kind: .nonExpiring,
                isSandbox: session.livemode.map { !$0 }, purchaseDate: session.created, autoRenew: false,
                originalTransactionID: id, storeTransactionID: intent ?? id, price: paid(item, session: session),
                line: PurchaseLine.of(store: .stripe, ids: [id, intent]), buyer: buyer)
            if productID != nil { purchase.alternateProductIDs = [priceID] }
            if let refund {
                purchase.refundedAt = refund.refundedAt
                purchase.refundTransactionID = refund.transactionID
            }
            let aliases = [item.id, intent].compactMap { $0 }.filter { !$0.isEmpty }
            facts.append(StoreFact(lookupID: id, purchase: purchase, aliases: aliases))
        }
        return .success(facts)
    }

    /// A line's `amount_total` in major units; nil when missing, out of range or in an unknown currency.
    static func paid(_ item: StripeLineItem, session: StripeCheckoutSession) -> Money? {
        guard let amount = item.amountTotal, (0...StripeMapping.maxUnitAmount).contains(amount),
            let currency = item.currency ?? session.currency, let exponent = StripeCurrency.exponent(currency)
        else { return nil }
        return StripeCurrency.money(minorUnits: Decimal(amount), currency: currency, exponent: exponent)
    }

    static func error(_ message: String) -> SourceError {
        SourceError(origin: .stripe, kind: .fetch, message: message)
    }
}
