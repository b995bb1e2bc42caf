import Foundation

/// A read permission of a Stripe restricted key, by the name Stripe's 403 message asks for (`rak_…_read`; the
/// subscriptions one is Stripe's own wording, the others follow its pattern).
public enum StripeReadPermission: String, Sendable, Hashable, CaseIterable {
    case subscriptions = "rak_subscription_read"
    case invoices = "rak_invoice_read"
    case charges = "rak_charge_read"
    case refunds = "rak_refund_read"
    case checkoutSessions = "rak_checkout_session_read"
    case events = "rak_event_read"

    /// The permission a `GET /v1/…` path needs (subscription items go with subscriptions, invoice payments with
    /// invoices); nil for a path the simulator does not serve.
    static func needed(by segments: [String]) -> StripeReadPermission? {
        guard segments.count >= 2, segments[0] == "v1" else { return nil }
        switch segments[1] {
        case "subscriptions", "subscription_items": return .subscriptions
        case "invoices", "invoice_payments": return .invoices
        case "charges": return .charges
        case "refunds": return .refunds
        case "checkout": return .checkoutSessions
        case "events": return .events
        default: return nil
        }
    }
}

extension StripeSimulator {
    /// Stripe's 403 for a restricted key without `permission`, its message as Stripe writes it: the key masked but
    /// for its last four characters, the account, and the permission that would let the request continue.
    func permissionDenied(_ permission: StripeReadPermission) -> SimulatorResponse {
        error(
            403, type: "invalid_request_error", code: nil,
            "The provided key 'rk_test_" + String(repeating: "*", count: 24) + String(apiKey.suffix(4))
                + "' does not have the required permissions for this endpoint on account 'acct_1Simulated0000000'. Having the '"
                + permission.rawValue + "' permission would allow this request to continue.")
    }

    /// `GET /v1/invoices` (`limit`, `starting_after`): the latest invoice of every subscription, in the order given.
    func listInvoices(_ query: [String: String]) -> SimulatorResponse {
        var encoded: [[String: Any]] = []
        var ids: [String] = []
        for customer in customerOrder {
            for subscription in customers[customer] ?? [] {
                guard let invoice = subscription.latestInvoice else { continue }
                encoded.append(
                    StripeWireValues.invoice(
                        invoice, subscriptionID: subscription.id, customerID: customer, livemode: subscription.livemode ?? true,
                        withPayments: false))
                ids.append(invoice.id)
            }
        }
        return page(encoded, ids: ids, query: query, url: "/v1/invoices")
    }

    /// `GET /v1/charges` without `payment_intent`: every charge, newest first.
    func listEveryCharge(_ query: [String: String]) -> SimulatorResponse {
        let selected = charges.enumerated()
            .sorted { $0.element.created != $1.element.created ? $0.element.created > $1.element.created : $0.offset > $1.offset }
            .map(\.element)
        let encoded = selected.map { StripeWireValues.charge($0, customerID: nil, withRefunds: false) }
        return page(encoded, ids: selected.map(\.id), query: query, url: "/v1/charges")
    }

    /// `GET /v1/refunds` without `charge`: every refund of every charge, each charge's newest first.
    func listEveryRefund(_ query: [String: String]) -> SimulatorResponse {
        var encoded: [[String: Any]] = []
        var ids: [String] = []
        for charge in charges {
            for refund in StripeWireValues.newestFirst(charge.refunds ?? []) {
                encoded.append(StripeWireValues.refund(refund, of: charge))
                ids.append(refund.id)
            }
        }
        return page(encoded, ids: ids, query: query, url: "/v1/refunds")
    }

    /// `GET /v1/checkout/sessions` without `customer`: every session, newest first.
    func listEverySession(_ query: [String: String]) -> SimulatorResponse {
        let all = checkoutSessions.flatMap { customer, sessions in sessions.map { (customer, $0) } }
            .sorted { $0.1.created != $1.1.created ? $0.1.created > $1.1.created : $0.1.id < $1.1.id }
        let encoded = all.map { Self.session($0.1, customer: $0.0, expandItems: false) }
        return page(encoded, ids: all.map(\.1.id), query: query, url: "/v1/checkout/sessions")
    }
}
