import Foundation
import SubreconCore

extension AppStoreSource {
    /// Whether to read the customer's non-consumables (`GET /inApps/v2/history/{id}?productType=NON_CONSUMABLE`,
    /// CONTRACT "Sources and the decision") besides the subscription statuses: when RevenueCat lists an App Store purchase that is not a
    /// subscription (a `non_subscriptions` entry), or when Apple's status answer does not name the row's own purchase
    /// as a subscription, neither by its original transaction id nor by the row's `iap_product_id` (the row's id
    /// or product is then a one-time purchase, or unknown to Apple). A subscriber whose row names their
    /// subscription costs no extra request; a lifetime buyer (or an id Apple does not know) costs one more request
    /// per night, and one per further page of 20 non-consumables.
    static func asksNonConsumables(row: UserRow, facts: SourceFacts, subscriptions: [StoreFact], lookup: String?) -> Bool {
        if facts.revenueCatPurchases.contains(where: { $0.store.isApple && $0.kind != .subscription }) { return true }
        guard lookup != nil else { return false }
        let named = subscriptions.contains { fact in
            let purchase = fact.purchase
            guard purchase.kind == .subscription || purchase.kind == .nonRenewing else { return false }
            if let id = row.originalTransactionID, !id.isEmpty, purchase.originalTransactionID == id { return true }
            if let product = row.productID, !product.isEmpty, purchase.productID == product { return true }
            return false
        }
        return !named
    }

    /// The transaction id of the most recent App Store purchase RevenueCat lists that is not a subscription: any
    /// transaction id of the customer opens their history (used when no subscription id is known).
    static func oneTimeLookup(_ facts: SourceFacts) -> String? {
        facts.revenueCatPurchases
            .filter { $0.store.isApple && $0.kind != .subscription && !($0.storeTransactionID ?? "").isEmpty }
            .max { ($0.purchaseDate ?? .distantPast) < ($1.purchaseDate ?? .distantPast) }?
            .storeTransactionID
    }
}
