import Foundation

extension StripeClient {
    /// `subscription` with every item it has (CONTRACT "Hostile answers and bounded work"). A subscription embeds the first page of its items; when
    /// that list says `has_more: true` (or does not say), the items are read from
    /// `GET /v1/subscription_items?subscription=sub_…` instead, every page by the same rules as every Stripe list
    /// (`everyPage`): an incomplete list is an error for the user, never a tier judged on some of its items.
    func withAllItems(_ subscription: StripeSubscription) async -> Result<StripeSubscription, StripeError> {
        guard subscription.items != nil, subscription.itemsHaveMore != false else { return .success(subscription) }
        guard let id = subscription.id, !id.isEmpty else {
            return .failure(.malformed("subscription items list incomplete, and the subscription has no id to read it by"))
        }
        let read = await everyElement(
            base: "/v1/subscription_items?subscription=\(Self.encoded(id))&limit=\(Self.pageSize)", id: id,
            what: "subscription items", decode: StripeList<StripeSubscriptionItem>.decode(body:), elementID: \.id)
        return read.map { items in
            var whole = subscription
            whole.items = items
            whole.itemsHaveMore = false
            return whole
        }
    }
}
