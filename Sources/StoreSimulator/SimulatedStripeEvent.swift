import Foundation

/// One event of the simulated Stripe (`GET /v1/events`), written in Stripe's event shape: `id`, `object: "event"`,
/// `api_version`, `created` (Unix seconds), `data.object` (a snapshot of the subscription, charge or dispute),
/// `livemode`, `pending_webhooks`, `request`, `type`.
public struct SimulatedStripeEvent: Sendable, Hashable {
    public var id: String
    /// `customer.subscription.updated`, `customer.subscription.deleted`, `charge.refunded`, `charge.dispute.created`, …
    public var type: String
    public var created: Date
    /// The customer `data.object` names; nil writes `null` (a guest charge). Disputes never name one.
    public var customer: String?
    /// Write `customer` as an expanded object (`{"id": …, "object": "customer"}`).
    public var expandedCustomer: Bool
    /// The id of `data.object` (`sub_…`, `ch_…`, `dp_…`).
    public var objectID: String
    /// For subscription events: the subscription's status in the snapshot.
    public var status: String
    public var livemode: Bool
    /// For charges: Stripe's "fully refunded" flag (nil: the key is absent), `amount_refunded` in minor units of
    /// `currency`, `payment_intent` (nil writes `null`), and the `created` of one `succeeded` refund in `refunds.data`
    /// (nil: no `refunds` list, as in recent API versions).
    public var refunded: Bool?
    public var amountRefunded: Int64
    public var currency: String
    public var paymentIntent: String?
    public var refundCreated: Date?
    /// For subscription events: the snapshot's `metadata` (`user_id`: the buyer's account, CONTRACT "Whose purchase it is"), and one item
    /// of this product until `periodEnd` (nil: no items, as before).
    public var metadata: [String: String] = [:]
    public var productID: String?
    public var periodEnd: Date?

    public init(
        id: String, type: String, created: Date, customer: String?, expandedCustomer: Bool = false, objectID: String? = nil,
        status: String = "active", livemode: Bool = true, refunded: Bool? = true, amountRefunded: Int64 = 999,
        currency: String = "usd", paymentIntent: String? = nil, refundCreated: Date? = nil
    ) {
        self.refunded = refunded
        self.amountRefunded = amountRefunded
        self.currency = currency
        self.paymentIntent = paymentIntent
        self.refundCreated = refundCreated
        self.id = id
        self.type = type
        self.created = created
        self.customer = customer
        self.expandedCustomer = expandedCustomer
        self.objectID = objectID ?? Self.defaultObjectID(type: type, eventID: id)
        self.status = status
        self.livemode = livemode
    }

    static func defaultObjectID(type: String, eventID: String) -> String {
        let suffix = eventID.hasPrefix("evt_") ? String(eventID.dropFirst(4)) : eventID
        if type.hasPrefix("customer.subscription.") { return "sub_" + suffix }
        if type.hasPrefix("charge.dispute.") { return "dp_" + suffix }
        return "ch_" + suffix
    }

    /// The event as Stripe writes it.
    func json(apiVersion: String?) -> [String: Any] {
        let seconds = Int64(created.timeIntervalSince1970.rounded(.down))
        let customerValue: Any =
            customer.map { expandedCustomer ? ["id": $0, "object": "customer", "email": NSNull()] as [String: Any] : $0 as Any }
            ?? NSNull()
        var object: [String: Any]
        var previous: [String: Any]?
        if type.hasPrefix("customer.subscription.") {
            object = [
                "id": objectID, "object": "subscription", "customer": customerValue, "status": status,
                "cancel_at_period_end": false, "canceled_at": status == "canceled" ? seconds : NSNull(),
                "ended_at": status == "canceled" ? seconds : NSNull(), "created": seconds - 86_400 * 30,
                "livemode": livemode, "metadata": metadata, "pause_collection": NSNull(),
                "items": ["object": "list", "data": snapshotItems(seconds: seconds), "has_more": false, "url": "/v1/subscription_items"],
            ]
            if type == "customer.subscription.updated" { previous = ["status": "active"] }
        } else if type.hasPrefix("charge.dispute.") {
            object = [
                "id": objectID, "object": "dispute", "charge": "ch_" + String(objectID.dropFirst(3)), "amount": 999,
                "currency": "usd", "reason": "fraudulent", "status": "needs_response", "livemode": livemode,
                "created": seconds, "metadata": [String: String](),
            ]
        } else {
            object = [
                "id": objectID, "object": "charge", "customer": customerValue, "amount": max(999, amountRefunded),
                "amount_refunded": amountRefunded, "currency": currency, "paid": true, "status": "succeeded",
                "livemode": livemode, "created": seconds - 86_400, "metadata": [String: String](), "invoice": NSNull(),
                "payment_intent": paymentIntent.map { $0 as Any } ?? NSNull(),
            ]
            if let refunded { object["refunded"] = refunded }
            if let refundCreated {
                let refundSeconds = Int64(refundCreated.timeIntervalSince1970.rounded(.down))
                object["refunds"] =
                    [
                        "object": "list", "has_more": false, "url": "/v1/charges/\(objectID)/refunds",
                        "data": [
                            [
                                "id": "re_" + String(objectID.dropFirst(3)), "object": "refund", "amount": amountRefunded,
                                "currency": currency, "created": refundSeconds, "status": "succeeded",
                                "payment_intent": paymentIntent.map { $0 as Any } ?? NSNull(),
                            ] as [String: Any]
                        ],
                    ] as [String: Any]
            }
            previous = ["amount_refunded": 0, "refunded": false]
        }
        var data: [String: Any] = ["object": object]
        if let previous { data["previous_attributes"] = previous }
        return [
            "id": id, "object": "event", "api_version": apiVersion ?? "2025-03-31.basil", "created": seconds, "data": data,
            "livemode": livemode, "pending_webhooks": 0, "request": ["id": NSNull(), "idempotency_key": NSNull()],
            "type": type,
        ]
    }

    /// The snapshot's items: one of `productID` until `periodEnd`, when both are set.
    private func snapshotItems(seconds: Int64) -> [[String: Any]] {
        guard let productID, let periodEnd else { return [] }
        return [
            [
                "id": "si_" + objectID, "object": "subscription_item", "quantity": 1,
                "current_period_start": seconds - 86_400, "current_period_end": Int64(periodEnd.timeIntervalSince1970.rounded(.down)),
                "price": ["id": "price_" + productID, "object": "price", "product": productID, "unit_amount": 999, "currency": currency],
            ]
        ]
    }
}
