import Foundation
import SubreconCore

extension RevenueCatSubscriber {
    /// Every purchase this subscriber holds, as RevenueCat states it (origin `.revenueCat`); nothing is defaulted.
    ///
    /// One fact per entry of `subscriptions` (kind `.subscription`), one per item of `non_subscriptions` (kind
    /// `.unstated`: whether it is non-expiring or a pass is what its entitlement says, which the core reads from
    /// `entitlementFacts()`), and one per entitlement whose product has no backing purchase (an entitlement-only
    /// grant, taken as `promotional`, a non-renewing grant ending at the entitlement's stated expiry).
    /// Ordered by product id, then purchase date, so equal answers give equal facts.
    public func purchaseFacts() -> [PurchaseFact] {
        var facts: [PurchaseFact] = []
        for productID in subscriptions.keys.sorted() {
            guard let subscription = subscriptions[productID] else { continue }
            let store = StoreKind(rawValue: subscription.store)
            facts.append(
                PurchaseFact(
                    origin: .revenueCat, productID: productID, store: store, kind: .subscription,
                    isSandbox: subscription.isSandbox, purchaseDate: subscription.purchaseDate,
                    expiresDate: subscription.expiresDate, gracePeriodExpiresDate: subscription.gracePeriodExpiresDate,
                    refundedAt: subscription.refundedAt, billingIssueDetectedAt: subscription.billingIssuesDetectedAt,
                    autoRenew: store == .promotional ? nil : subscription.unsubscribeDetectedAt == nil,
                    isPaused: subscription.autoResumeDate != nil,
                    storeTransactionID: subscription.storeTransactionID, price: subscription.price?.money,
                    renewalPrice: Self.periodType(subscription.periodType) == .normal ? subscription.price?.money : nil,
                    ownership: Self.ownership(subscription.ownershipType), periodType: Self.periodType(subscription.periodType),
                    line: PurchaseLine.of(store: store, ids: [subscription.storeTransactionID]), buyer: .byListing))
        }
        for productID in nonSubscriptions.keys.sorted() {
            let items = (nonSubscriptions[productID] ?? []).sorted {
                ($0.purchaseDate ?? .distantPast, $0.id ?? "") < ($1.purchaseDate ?? .distantPast, $1.id ?? "")
            }
            for item in items {
                facts.append(
                    PurchaseFact(
                        origin: .revenueCat, productID: productID, store: StoreKind(rawValue: item.store), kind: .unstated,
                        isSandbox: item.isSandbox, purchaseDate: item.purchaseDate, refundedAt: item.refundedAt,
                        storeTransactionID: item.storeTransactionID, price: item.price?.money,
                        line: PurchaseLine.of(store: StoreKind(rawValue: item.store), ids: [item.storeTransactionID]),
                        buyer: .byListing))
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
                    origin: .revenueCat, productID: productID, store: .promotional, kind: .nonRenewing, isSandbox: nil,
                    purchaseDate: entitlement.purchaseDate, expiresDate: entitlement.expiresDate,
                    gracePeriodExpiresDate: entitlement.gracePeriodExpiresDate, line: nil, buyer: .byListing))
        }
        return facts
    }

    /// The entitlements as stated, expired ones included, ordered by identifier.
    public func entitlementFacts() -> [EntitlementFact] {
        entitlements.keys.sorted().compactMap { name in
            entitlements[name].map {
                EntitlementFact(
                    identifier: name, productID: $0.productIdentifier, expires: $0.expires,
                    gracePeriodExpiresDate: $0.gracePeriodExpiresDate, purchaseDate: $0.purchaseDate)
            }
        }
    }
}

extension RevenueCatSubscriberResponse {
    /// The facts for the decision: `revenueCatKnowsSubscriber` is false for a 201 (just created) or an empty subscriber.
    public func sourceFacts(status: Int) -> SourceFacts {
        let known = status != 201 && !subscriber.isEmpty
        return SourceFacts(
            revenueCatKnowsSubscriber: known, revenueCatPurchases: subscriber.purchaseFacts(),
            revenueCatEntitlements: subscriber.entitlementFacts())
    }
}

extension RevenueCatSubscriber {
    /// `ownership_type`: `PURCHASED` or `FAMILY_SHARED` (any case); nil for anything else.
    static func ownership(_ text: String?) -> Ownership? {
        switch text?.uppercased() {
        case "PURCHASED": .purchased
        case "FAMILY_SHARED": .familyShared
        default: nil
        }
    }

    /// `period_type`: `normal`, `trial` or `intro` (any case); nil for anything else (`prepaid`, missing).
    /// Only a `normal` period's price is the next renewal's price (CONTRACT "Finance figures").
    static func periodType(_ text: String?) -> PeriodType? {
        switch text?.lowercased() {
        case "normal": .normal
        case "trial": .trial
        case "intro": .intro
        default: nil
        }
    }
}
