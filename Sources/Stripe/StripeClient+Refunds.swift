import Foundation
import Logging
import SubreconCore

extension StripeClient {
    /// The query items asking a subscription list for each customer (its `metadata.user_id` names the buyer, CONTRACT
    /// "Whose purchase it is") and each latest invoice with its payments (Stripe allows four expansion levels).
    static let listExpansion =
        "\(encoded("expand[]"))=\(encoded("data.customer"))&\(encoded("expand[]"))=\(encoded("data.latest_invoice.payments"))"
    /// The same for `GET /v1/subscriptions/{id}`.
    static let subscriptionExpansion =
        "\(encoded("expand[]"))=\(encoded("customer"))&\(encoded("expand[]"))=\(encoded("latest_invoice.payments"))"

    /// The full refund of each subscription's current period, by subscription id (see `StripeRefundMapping`).
    ///
    /// For each subscription `StripeRefundMapping.invoiceToAsk` selects: the latest invoice's payments (the expanded
    /// `payments` when complete, else `GET /v1/invoice_payments?invoice=…`, every page), then for each paid payment
    /// its charges with their refunds (`GET /v1/charges?payment_intent=…&expand[]=data.refunds`, every page, or
    /// `GET /v1/charges/{id}?expand[]=refunds`); a refunded charge whose expanded refunds are cut (`has_more`) or
    /// missing has them listed (`GET /v1/refunds?charge=…`, every page). Any request failing, any unreadable answer
    /// and any charge the mapping cannot judge is an error: the user is left untouched.
    public func periodRefunds(of subscriptions: [StripeSubscription]) async -> Result<[String: StripePeriodRefund], SourceError> {
        func failure(_ error: StripeError) -> Result<[String: StripePeriodRefund], SourceError> {
            .failure(SourceError(origin: .stripe, kind: .fetch, message: error.description))
        }
        var found: [String: StripePeriodRefund] = [:]
        for subscription in subscriptions {
            guard let invoice = StripeRefundMapping.invoiceToAsk(subscription), let invoiceID = invoice.id,
                let subscriptionID = subscription.id, !subscriptionID.isEmpty
            else { continue }
            let payments: [StripeInvoicePayment]
            if let stated = StripeRefundMapping.statedPayments(of: invoice) {
                payments = stated
            } else {
                switch await invoicePayments(invoiceID: invoiceID) {
                case .failure(let error): return failure(error)
                case .success(let listed): payments = listed
                }
            }
            var paid: [StripePaidPayment] = []
            for payment in payments where StripeRefundMapping.isPaid(payment) {
                var read: [StripeCharge] = []
                switch StripeRefundMapping.chargeLookup(payment) {
                case .paymentIntent(let intent)?:
                    switch await charges(paymentIntentID: intent) {
                    case .failure(let error): return failure(error)
                    case .success(let listed): read = listed
                    }
                case .charge(let id)?:
                    switch await charge(id: id) {
                    case .failure(let error): return failure(error)
                    case .success(let charge): read = [charge]
                    }
                case nil:
                    break
                }
                switch await withEveryRefund(read) {
                case .failure(let error): return failure(error)
                case .success(let complete): read = complete
                }
                paid.append(StripePaidPayment(payment: payment, charges: read))
            }
            switch StripeRefundMapping.periodRefund(subscription: subscriptionID, payments: paid) {
            case .failure(let error): return .failure(error)
            case .success(nil): continue
            case .success(let refund?):
                logger.debug(
                    "stripe period refunded",
                    metadata: ["stripe.subscription": "\(subscriptionID)", "stripe.refund": "\(refund.transactionID)"])
                found[subscriptionID] = refund
            }
        }
        return .success(found)
    }

    /// Every payment of `invoiceID`: `GET /v1/invoice_payments?invoice=…&limit=100`, every page (at most `maxPages`).
    public func invoicePayments(invoiceID: String) async -> Result<[StripeInvoicePayment], StripeError> {
        await everyElement(
            base: "/v1/invoice_payments?invoice=\(Self.encoded(invoiceID))&limit=\(Self.pageSize)", id: invoiceID,
            what: "invoice payments", decode: StripeInvoicePaymentList.decode(body:), elementID: \.id)
    }

    /// Every charge of `paymentIntentID` with its refunds: `GET /v1/charges?payment_intent=…&limit=100&expand[]=data.refunds`,
    /// every page (at most `maxPages`).
    public func charges(paymentIntentID: String) async -> Result<[StripeCharge], StripeError> {
        await everyElement(
            base: "/v1/charges?payment_intent=\(Self.encoded(paymentIntentID))&limit=\(Self.pageSize)&"
                + "\(Self.encoded("expand[]"))=\(Self.encoded("data.refunds"))",
            id: paymentIntentID, what: "charges", decode: StripeChargeList.decode(body:), elementID: \.id)
    }

    /// `charges` with every refund of each refunded charge whose embedded refunds list is missing or cut off
    /// (read from `GET /v1/refunds?charge=…`, every page).
    func withEveryRefund(_ charges: [StripeCharge]) async -> Result<[StripeCharge], StripeError> {
        var read = charges
        for (index, charge) in read.enumerated()
        where charge.refunded == true && (charge.refunds == nil || charge.refundsHaveMore != false) {
            guard let id = charge.id, !id.isEmpty else { continue }
            switch await refunds(chargeID: id) {
            case .failure(let error): return .failure(error)
            case .success(let listed):
                read[index].refunds = listed
                read[index].refundsHaveMore = false
            }
        }
        return .success(read)
    }

    /// Every refund of `chargeID`: `GET /v1/refunds?charge=…&limit=100`, every page (at most `maxPages`).
    public func refunds(chargeID: String) async -> Result<[StripeRefund], StripeError> {
        await everyElement(
            base: "/v1/refunds?charge=\(Self.encoded(chargeID))&limit=\(Self.pageSize)", id: chargeID, what: "refunds",
            decode: StripeList<StripeRefund>.decode(body:), elementID: \.id)
    }

    /// One charge with its refunds: `GET /v1/charges/{id}?expand[]=refunds`. A charge an invoice payment names and
    /// Stripe does not know is an error.
    public func charge(id: String) async -> Result<StripeCharge, StripeError> {
        let path = "/v1/charges/\(Self.encoded(id))?\(Self.encoded("expand[]"))=\(Self.encoded("refunds"))"
        switch await get(path: path, id: id, absenceIsAnswer: false) {
        case .failure(let error): return .failure(error)
        case .success(nil): return .failure(.malformed("charge without a body"))
        case .success(let body?):
            do { return .success(try StripeCharge.decode(body: body)) } catch {
                return .failure(.malformed("charge: " + explain(error)))
            }
        }
    }
}
