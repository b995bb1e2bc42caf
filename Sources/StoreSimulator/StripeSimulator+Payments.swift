import Foundation

// The Stripe simulator's invoice payments, charges and refunds (`GET /v1/invoice_payments?invoice=…`,
// `GET /v1/charges?payment_intent=…`, `GET /v1/charges/{id}`, `GET /v1/refunds?charge=…`): what the refund lookup
// reads for a subscription's latest invoice.
extension StripeSimulator {
    /// `GET /v1/invoice_payments?invoice=…` (`limit`, `starting_after`); an invoice no subscription has is 404.
    func listPayments(_ invoiceID: String, _ query: [String: String]) -> SimulatorResponse {
        let owner = customers.sorted(by: { $0.key < $1.key }).lazy.flatMap(\.value).first { $0.latestInvoice?.id == invoiceID }
        guard let owner, let invoice = owner.latestInvoice else {
            return error(404, type: "invalid_request_error", code: "resource_missing", "No such invoice: '\(invoiceID)'", param: "invoice")
        }
        let encoded = invoice.payments.map {
            StripeWireValues.payment($0, invoiceID: invoice.id, livemode: owner.livemode ?? true, created: invoice.created)
        }
        return page(encoded, ids: invoice.payments.map(\.id), query: query, url: "/v1/invoice_payments")
    }

    /// `GET /v1/charges?payment_intent=…` (`limit`, `starting_after`), newest first.
    func listCharges(_ intent: String, _ query: [String: String], withRefunds: Bool) -> SimulatorResponse {
        let selected = charges.enumerated().filter { $0.element.paymentIntentID == intent }
            .sorted { $0.element.created != $1.element.created ? $0.element.created > $1.element.created : $0.offset > $1.offset }
            .map(\.element)
        let encoded = selected.map { StripeWireValues.charge($0, customerID: customerID(ofCharge: $0), withRefunds: withRefunds) }
        return page(encoded, ids: selected.map(\.id), query: query, url: "/v1/charges")
    }

    /// `GET /v1/refunds?charge=…` (`limit`, `starting_after`), newest first; an unknown charge is 404.
    func listRefunds(_ chargeID: String, _ query: [String: String]) -> SimulatorResponse {
        guard let charge = charges.first(where: { $0.id == chargeID }) else {
            return error(404, type: "invalid_request_error", code: "resource_missing", "No such charge: '\(chargeID)'", param: "charge")
        }
        let refunds = StripeWireValues.newestFirst(charge.refunds ?? [])
        let encoded = refunds.map { StripeWireValues.refund($0, of: charge) }
        return page(encoded, ids: refunds.map(\.id), query: query, url: "/v1/refunds")
    }

    func retrieveCharge(_ id: String, withRefunds: Bool) -> SimulatorResponse {
        guard let charge = charges.first(where: { $0.id == id }) else {
            return error(404, type: "invalid_request_error", code: "resource_missing", "No such charge: '\(id)'", param: "id")
        }
        return json(200, StripeWireValues.charge(charge, customerID: customerID(ofCharge: charge), withRefunds: withRefunds))
    }

    /// One page of a list by `limit` (default 10, 1...100) and `starting_after`.
    func page(_ encoded: [[String: Any]], ids: [String], query: [String: String], url: String) -> SimulatorResponse {
        let limit = Int(query["limit"] ?? "10") ?? 0
        guard (1...100).contains(limit) else {
            return error(400, type: "invalid_request_error", code: "parameter_invalid_integer", "Invalid limit", param: "limit")
        }
        var start = 0
        if let after = query["starting_after"] {
            guard let index = ids.firstIndex(of: after) else {
                return error(
                    404, type: "invalid_request_error", code: "resource_missing", "No such object: '\(after)'", param: "starting_after")
            }
            start = index + 1
        }
        let rest = Array(encoded[start...])
        return json(200, StripeWireValues.list(Array(rest.prefix(limit)), url: url, hasMore: rest.count > limit))
    }

    /// The customer of the subscription whose latest invoice a charge paid.
    private func customerID(ofCharge charge: SimulatedStripeCharge) -> String? {
        for (customer, subscriptions) in customers.sorted(by: { $0.key < $1.key }) {
            for subscription in subscriptions {
                for payment in subscription.latestInvoice?.payments ?? [] {
                    switch payment.target {
                    case .paymentIntent(let intent) where intent == charge.paymentIntentID: return customer
                    case .charge(let id) where id == charge.id: return customer
                    default: continue
                    }
                }
            }
        }
        return nil
    }
}
