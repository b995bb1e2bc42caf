import Foundation
import SubreconCore

extension StripeClient {
    /// The query of the customer's completed Checkout Sessions, each with its line items.
    static let checkoutExpansion =
        "\(encoded("expand[]"))=\(encoded("data.line_items"))&\(encoded("expand[]"))=\(encoded("data.customer"))"

    /// The one-time prices `customerID` paid for (CONTRACT "Sources and the decision"), as non-expiring facts (`StripeOneTimeMapping`).
    ///
    /// `GET /v1/checkout/sessions?customer=…&status=complete&limit=100&expand[]=data.line_items`, every page by the
    /// rules of every Stripe list (`everyPage`: a page without `has_more`, or a cursor seen before, is an error); a
    /// customer Stripe does not know has none. For each paid `payment` session: its line items when the embedded
    /// list is cut (`GET /v1/checkout/sessions/{id}/line_items`, every page), and its payment intent's charges with
    /// their refunds (`GET /v1/charges?payment_intent=…`, `GET /v1/refunds?charge=…`), so that a payment refunded in
    /// full never entitles. Any failure is an error: the user is left untouched.
    public func oneTimePurchases(customerID: String) async -> Result<[StoreFact], SourceError> {
        func failure(_ error: StripeError) -> Result<[StoreFact], SourceError> {
            .failure(SourceError(origin: .stripe, kind: .fetch, message: "checkout sessions: " + error.description))
        }
        let listed = await everyElement(
            base: "/v1/checkout/sessions?customer=\(Self.encoded(customerID))&status=complete&limit=\(Self.pageSize)&"
                + Self.checkoutExpansion,
            id: customerID, what: "checkout sessions", decode: { try StripeCheckoutSessionList.decode(body: $0).askedCustomerExpanded() },
            elementID: \.id,
            absenceOnFirstPage: true, tooMany: .tooManyPages(configuration.maxPages))
        guard case .success(let sessions) = listed else {
            if case .failure(let error) = listed { return failure(error) }
            return .success([])
        }
        var facts: [StoreFact] = []
        for var session in sessions {
            switch StripeOneTimeMapping.isPaidPayment(session) {
            case .failure(let error): return .failure(error)
            case .success(false): continue
            case .success(true): break
            }
            if session.lineItems == nil || session.lineItemsHaveMore != false, let id = session.id, !id.isEmpty {
                switch await lineItems(sessionID: id) {
                case .failure(let error): return failure(error)
                case .success(let items):
                    session.lineItems = items
                    session.lineItemsHaveMore = false
                }
            }
            guard session.lineItems?.contains(where: { $0.price?.type != "recurring" }) == true else { continue }
            guard let intent = session.paymentIntent, !intent.isEmpty else {
                let name = String((session.id ?? "without an id").prefix(80))
                return .failure(
                    SourceError(
                        origin: .stripe, kind: .fetch,
                        message: "paid checkout session \(name) names no payment intent: its refunds cannot be read"))
            }
            let refund: StripePeriodRefund?
            switch await refundInFull(paymentIntentID: intent, name: session.id ?? intent) {
            case .failure(let error): return .failure(error)
            case .success(let found): refund = found
            }
            switch StripeOneTimeMapping.storeFacts(session, refund: refund) {
            case .failure(let error): return .failure(error)
            case .success(let more): facts += more
            }
        }
        return .success(facts)
    }

    /// Every line item of a Checkout Session: `GET /v1/checkout/sessions/{id}/line_items?limit=100`, every page.
    public func lineItems(sessionID: String) async -> Result<[StripeLineItem], StripeError> {
        await everyElement(
            base: "/v1/checkout/sessions/\(Self.encoded(sessionID))/line_items?limit=\(Self.pageSize)", id: sessionID,
            what: "checkout session line items", decode: StripeList<StripeLineItem>.decode(body:), elementID: \.id)
    }

    /// The refund in full of a payment intent's charges (by `StripeRefundMapping.periodRefund`), nil when none.
    func refundInFull(paymentIntentID intent: String, name: String) async -> Result<StripePeriodRefund?, SourceError> {
        func failure(_ error: StripeError) -> Result<StripePeriodRefund?, SourceError> {
            .failure(SourceError(origin: .stripe, kind: .fetch, message: "one-time payment \(intent): " + error.description))
        }
        var read: [StripeCharge]
        switch await charges(paymentIntentID: intent) {
        case .failure(let error): return failure(error)
        case .success(let listed): read = listed
        }
        switch await withEveryRefund(read) {
        case .failure(let error): return failure(error)
        case .success(let complete): read = complete
        }
        let payment = StripeInvoicePayment(
            id: intent, amountPaid: nil, currency: nil, status: "paid", paymentType: "payment_intent", paymentIntent: intent)
        return StripeRefundMapping.periodRefund(subscription: name, payments: [StripePaidPayment(payment: payment, charges: read)])
    }
}
