import Foundation

/// `GET /v1/subscription_items?subscription=sub_…` (`limit` 1...100, `starting_after`): a subscription's items, in
/// the order given, paged with `has_more` like every Stripe list; and the item object every answer embeds.
extension StripeSimulator {
    /// The fault key of `GET /v1/subscription_items?subscription=…`.
    public static func itemsKey(subscription: String) -> String { "items/\(subscription)" }

    /// Embeds at most `limit` items in every subscription (`items.has_more: true` beyond, as Stripe does past 10);
    /// nil: all of them.
    public func setEmbeddedItemLimit(_ limit: Int?) { embeddedItemLimit = limit }

    func listItems(_ subscriptionID: String, _ query: [String: String]) -> SimulatorResponse {
        let limit = Int(query["limit"] ?? "10") ?? 0
        guard (1...100).contains(limit) else {
            return error(400, type: "invalid_request_error", code: "parameter_invalid_integer", "Invalid limit", param: "limit")
        }
        guard let subscription = customers.values.joined().first(where: { $0.id == subscriptionID }) else {
            return error(
                404, type: "invalid_request_error", code: "resource_missing", "No such subscription: '\(subscriptionID)'",
                param: "subscription")
        }
        var selected = subscription.items
        if let after = query["starting_after"] {
            guard let index = selected.firstIndex(where: { $0.id == after }) else {
                return error(
                    404, type: "invalid_request_error", code: "resource_missing", "No such subscription item: '\(after)'",
                    param: "starting_after")
            }
            selected = Array(selected[(index + 1)...])
        }
        let page = selected.prefix(limit).map { encodeItem($0, of: subscription) }
        return json(
            200,
            [
                "object": "list", "url": "/v1/subscription_items", "has_more": selected.count > limit, "data": page,
            ])
    }

    /// One `subscription_item` object as Stripe writes it (item-level period in the `items` layout).
    func encodeItem(_ item: SimulatedStripeItem, of subscription: SimulatedStripeSubscription) -> [String: Any] {
        func seconds(_ date: Date?) -> Any { date.map { Int64($0.timeIntervalSince1970.rounded(.down)) } ?? NSNull() }
        var price: [String: Any] = [
            "id": item.priceID, "object": "price", "active": true, "currency": item.currency, "type": "recurring",
            "unit_amount": item.unitAmount.map { $0 as Any } ?? NSNull(),
            "unit_amount_decimal": item.unitAmount.map { String($0) as Any } ?? NSNull(),
            "recurring": ["interval": item.interval, "interval_count": 1, "usage_type": "licensed"],
            "livemode": subscription.livemode ?? true,
        ]
        if let product = item.productID {
            price["product"] = item.expandedProduct ? ["id": product, "object": "product", "name": product] : product
        }
        var encoded: [String: Any] = [
            "id": item.id, "object": "subscription_item", "subscription": subscription.id, "quantity": item.quantity,
            "price": price, "created": seconds(subscription.created), "metadata": [String: String](),
        ]
        if layout == .items {
            encoded["current_period_start"] = seconds(subscription.currentPeriodStart)
            encoded["current_period_end"] = seconds(subscription.currentPeriodEnd)
        }
        return encoded
    }
}
