import Foundation

/// One line item of a simulated Checkout Session.
public struct SimulatedStripeLineItem: Sendable, Hashable {
    public var id: String
    public var priceID: String
    public var productID: String?
    /// `one_time` or `recurring`; nil: the key is left out (a hostile answer).
    public var priceType: String?
    /// Minor units.
    public var amount: Int64
    public var currency: String

    public init(
        id: String, priceID: String, productID: String?, priceType: String? = "one_time", amount: Int64 = 4999, currency: String = "usd"
    ) {
        self.id = id
        self.priceID = priceID
        self.productID = productID
        self.priceType = priceType
        self.amount = amount
        self.currency = currency
    }
}

/// One simulated Checkout Session (a one-time payment, unless told otherwise); its payment's charges are given with
/// `addCharges` under the same payment intent.
public struct SimulatedStripeCheckoutSession: Sendable, Hashable {
    public var id: String
    public var mode: String
    public var status: String
    public var paymentStatus: String
    public var livemode: Bool
    public var created: Date
    public var paymentIntentID: String?
    public var lineItems: [SimulatedStripeLineItem]
    /// The session's `metadata` (`user_id`: the buyer's account).
    public var metadata: [String: String] = [:]
    /// The session's `client_reference_id` (where Stripe's docs tell an app to put its user id); nil: null.
    public var clientReferenceID: String?

    public init(
        id: String, mode: String = "payment", status: String = "complete", paymentStatus: String = "paid", livemode: Bool = true,
        created: Date, paymentIntentID: String?, lineItems: [SimulatedStripeLineItem]
    ) {
        self.id = id
        self.mode = mode
        self.status = status
        self.paymentStatus = paymentStatus
        self.livemode = livemode
        self.created = created
        self.paymentIntentID = paymentIntentID
        self.lineItems = lineItems
    }
}

// `GET /v1/checkout/sessions?customer=…` (`status`, `limit`, `starting_after`, `expand[]=data.line_items`: the first
// 10 line items, `has_more` beyond) and `GET /v1/checkout/sessions/{id}/line_items`, newest first.
extension StripeSimulator {
    /// The fault key of the customer's checkout sessions list.
    public static func checkoutKey(customer: String) -> String { "checkout/\(customer)" }

    /// Replaces the customer's Checkout Sessions (the customer is then known to Stripe).
    public func setCheckoutSessions(_ sessions: [SimulatedStripeCheckoutSession], forCustomer customerID: String) {
        checkoutSessions[customerID] = sessions
    }

    /// Answers every customer expansion (subscriptions by customer or by id, the inventory, checkout sessions) with
    /// the bare id (`true`), or as asked (`false`, the default).
    public func setIgnoresCustomerExpansion(_ ignores: Bool) {
        ignoresCustomerExpansion = ignores
    }

    func handleCheckout(_ request: SimulatorRequest) -> SimulatorResponse {
        let segments = request.pathSegments
        if segments.count == 5, segments[4] == "line_items" {
            let id = segments[3]
            guard let session = checkoutSessions.values.lazy.flatMap({ $0 }).first(where: { $0.id == id }) else {
                return error(404, type: "invalid_request_error", code: "resource_missing", "No such checkout session: '\(id)'", param: "id")
            }
            let items = session.lineItems.map { Self.lineItem($0) }
            return serve(key: "line_items/\(id)") {
                page(items, ids: session.lineItems.map(\.id), query: request.query, url: "/v1/checkout/sessions/\(id)/line_items")
            }
        }
        guard segments.count == 3 else { return error(404, type: "invalid_request_error", code: nil, "Unrecognized request URL") }
        guard let customer = request.query["customer"] else { return listEverySession(request.query) }
        return serve(key: Self.checkoutKey(customer: customer)) {
            guard customers[customer] != nil || checkoutSessions[customer] != nil else {
                return error(
                    404, type: "invalid_request_error", code: "resource_missing", "No such customer: '\(customer)'", param: "customer")
            }
            let selected = (checkoutSessions[customer] ?? []).filter { session in
                request.query["status"].map { $0 == session.status } ?? true
            }
            .sorted { $0.created > $1.created }
            let expansions = request.queryValues["expand[]"] ?? []
            let expand = expansions.contains("data.line_items")
            let encoded = selected.map { session in
                var object = Self.session(session, customer: customer, expandItems: expand)
                if expansions.contains("data.customer"), !ignoresCustomerExpansion {
                    object["customer"] = customerObject(customer, livemode: session.livemode)
                }
                return object
            }
            return page(encoded, ids: selected.map(\.id), query: request.query, url: "/v1/checkout/sessions")
        }
    }

    static func session(_ session: SimulatedStripeCheckoutSession, customer: String, expandItems: Bool) -> [String: Any] {
        var object: [String: Any] = [
            "id": session.id, "object": "checkout.session", "customer": customer, "mode": session.mode,
            "status": session.status, "payment_status": session.paymentStatus, "livemode": session.livemode,
            "created": Int64(session.created.timeIntervalSince1970.rounded(.down)),
            "payment_intent": session.paymentIntentID.map { $0 as Any } ?? NSNull(),
            "currency": session.lineItems.first?.currency ?? "usd",
            "amount_total": session.lineItems.reduce(Int64(0)) { $0 + $1.amount }, "subscription": NSNull(),
            "metadata": session.metadata, "client_reference_id": session.clientReferenceID.map { $0 as Any } ?? NSNull(),
        ]
        if expandItems {
            let shown = session.lineItems.prefix(10)
            object["line_items"] = [
                "object": "list", "data": shown.map { lineItem($0) }, "has_more": session.lineItems.count > shown.count,
                "url": "/v1/checkout/sessions/\(session.id)/line_items",
            ]
        }
        return object
    }

    static func lineItem(_ item: SimulatedStripeLineItem) -> [String: Any] {
        var price: [String: Any] = [
            "id": item.priceID, "object": "price", "product": item.productID.map { $0 as Any } ?? NSNull(),
            "unit_amount": item.amount, "currency": item.currency, "recurring": NSNull(),
        ]
        if let type = item.priceType { price["type"] = type }
        return [
            "id": item.id, "object": "item", "quantity": 1, "amount_total": item.amount, "amount_subtotal": item.amount,
            "currency": item.currency, "price": price, "description": "Lifetime",
        ]
    }
}
