import Foundation
import SubreconCore

extension RevenueCatSubscriber {
    /// Every purchase this subscriber holds, as RevenueCat describes it (origin `.revenueCat`).
    ///
    /// One fact per entry of `subscriptions`, one per item of `non_subscriptions` (lifetime), and one per
    /// entitlement whose product has no backing purchase (an entitlement-only grant, taken as `promotional`).
    /// Ordered by product id, then purchase date, so equal answers give equal facts.
    public func purchaseFacts() -> [PurchaseFact] {
        var facts: [PurchaseFact] = []
        for productID in subscriptions.keys.sorted() {
            guard let subscription = subscriptions[productID] else { continue }
            let store = StoreKind(rawValue: subscription.store)
            facts.append(
                PurchaseFact(
                    origin: .revenueCat, productID: productID, store: store, isSandbox: subscription.isSandbox,
                    isLifetime: false, purchaseDate: subscription.purchaseDate, expiresDate: subscription.expiresDate,
                    gracePeriodExpiresDate: subscription.gracePeriodExpiresDate, refundedAt: subscription.refundedAt,
                    billingIssueDetectedAt: subscription.billingIssuesDetectedAt,
                    autoRenew: store == .promotional ? nil : subscription.unsubscribeDetectedAt == nil,
                    isPaused: subscription.autoResumeDate != nil,
                    storeTransactionID: subscription.storeTransactionID, price: subscription.price?.money))
        }
        for productID in nonSubscriptions.keys.sorted() {
            let items = (nonSubscriptions[productID] ?? []).sorted {
                ($0.purchaseDate ?? .distantPast, $0.id ?? "") < ($1.purchaseDate ?? .distantPast, $1.id ?? "")
            }
            for item in items {
                facts.append(
                    PurchaseFact(
                        origin: .revenueCat, productID: productID, store: StoreKind(rawValue: item.store),
                        isSandbox: item.isSandbox, isLifetime: true, purchaseDate: item.purchaseDate, expiresDate: nil,
                        refundedAt: item.refundedAt, autoRenew: nil, storeTransactionID: item.storeTransactionID,
                        price: item.price?.money))
            }
        }
        var backed = Set(subscriptions.keys).union(nonSubscriptions.keys)
        for name in entitlements.keys.sorted() {
            guard let entitlement = entitlements[name], let productID = entitlement.productIdentifier,
                !backed.contains(productID)
            else { continue }
            backed.insert(productID)
            facts.append(
                PurchaseFact(
                    origin: .revenueCat, productID: productID, store: .promotional, isSandbox: false,
                    isLifetime: entitlement.expiresDate == nil, purchaseDate: entitlement.purchaseDate,
                    expiresDate: entitlement.expiresDate, gracePeriodExpiresDate: entitlement.gracePeriodExpiresDate,
                    autoRenew: nil))
        }
        return facts
    }
}

extension RevenueCatSubscriberResponse {
    /// The facts for the decision: `subscriberKnown` is false for a 201 (just created) or an empty subscriber.
    public func sourceFacts(status: Int) -> SourceFacts {
        let known = status != 201 && !subscriber.isEmpty
        return SourceFacts(subscriberKnown: known, purchases: subscriber.purchaseFacts())
    }
}
