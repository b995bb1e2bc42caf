import Foundation

/// A price in the simulator's RevenueCat answers.
public struct SimulatedPrice: Sendable, Hashable {
    public var amount: Decimal
    public var currency: String
    public init(amount: Decimal, currency: String) {
        self.amount = amount
        self.currency = currency
    }
}

/// One entry of `subscriptions` as the simulated RevenueCat reports it.
public struct SimulatedSubscription: Sendable, Hashable {
    public var productID: String
    public var store: String
    public var isSandbox: Bool
    public var periodType: String
    public var purchaseDate: Date
    public var originalPurchaseDate: Date?
    public var expiresDate: Date?
    public var gracePeriodExpiresDate: Date?
    public var refundedAt: Date?
    public var unsubscribeDetectedAt: Date?
    public var billingIssuesDetectedAt: Date?
    public var autoResumeDate: Date?
    public var ownershipType: String
    public var storeTransactionID: String?
    public var price: SimulatedPrice?

    public init(
        productID: String, store: String = "app_store", isSandbox: Bool = false, periodType: String = "normal",
        purchaseDate: Date, originalPurchaseDate: Date? = nil, expiresDate: Date?, gracePeriodExpiresDate: Date? = nil,
        refundedAt: Date? = nil, unsubscribeDetectedAt: Date? = nil, billingIssuesDetectedAt: Date? = nil,
        autoResumeDate: Date? = nil, ownershipType: String = "PURCHASED", storeTransactionID: String? = nil,
        price: SimulatedPrice? = nil
    ) {
        self.productID = productID
        self.store = store
        self.isSandbox = isSandbox
        self.periodType = periodType
        self.purchaseDate = purchaseDate
        self.originalPurchaseDate = originalPurchaseDate
        self.expiresDate = expiresDate
        self.gracePeriodExpiresDate = gracePeriodExpiresDate
        self.refundedAt = refundedAt
        self.unsubscribeDetectedAt = unsubscribeDetectedAt
        self.billingIssuesDetectedAt = billingIssuesDetectedAt
        self.autoResumeDate = autoResumeDate
        self.ownershipType = ownershipType
        self.storeTransactionID = storeTransactionID
        self.price = price
    }
}

/// One item of `non_subscriptions` (a one-time purchase).
public struct SimulatedNonSubscription: Sendable, Hashable {
    public var productID: String
    public var id: String
    public var store: String
    public var isSandbox: Bool
    public var purchaseDate: Date
    public var storeTransactionID: String?
    public var price: SimulatedPrice?

    public init(
        productID: String, id: String, store: String = "app_store", isSandbox: Bool = false, purchaseDate: Date,
        storeTransactionID: String? = nil, price: SimulatedPrice? = nil
    ) {
        self.productID = productID
        self.id = id
        self.store = store
        self.isSandbox = isSandbox
        self.purchaseDate = purchaseDate
        self.storeTransactionID = storeTransactionID
        self.price = price
    }
}

/// One entry of `entitlements`. `expiresDate == nil` is lifetime.
public struct SimulatedEntitlement: Sendable, Hashable {
    public var identifier: String
    public var productIdentifier: String
    public var expiresDate: Date?
    public var gracePeriodExpiresDate: Date?
    public var purchaseDate: Date?

    public init(
        identifier: String, productIdentifier: String, expiresDate: Date?, gracePeriodExpiresDate: Date? = nil,
        purchaseDate: Date? = nil
    ) {
        self.identifier = identifier
        self.productIdentifier = productIdentifier
        self.expiresDate = expiresDate
        self.gracePeriodExpiresDate = gracePeriodExpiresDate
        self.purchaseDate = purchaseDate
    }
}

/// A customer of the simulated RevenueCat.
///
/// `entitlements == nil` lets the simulator derive them from the purchases and its product → entitlement map,
/// keeping, like RevenueCat, the purchase with the furthest-out expiry per entitlement.
public struct SimulatedSubscriber: Sendable, Hashable {
    public var originalAppUserID: String?
    public var firstSeen: Date?
    public var subscriptions: [SimulatedSubscription]
    public var nonSubscriptions: [SimulatedNonSubscription]
    public var entitlements: [SimulatedEntitlement]?

    public init(
        originalAppUserID: String? = nil, firstSeen: Date? = nil, subscriptions: [SimulatedSubscription] = [],
        nonSubscriptions: [SimulatedNonSubscription] = [], entitlements: [SimulatedEntitlement]? = nil
    ) {
        self.originalAppUserID = originalAppUserID
        self.firstSeen = firstSeen
        self.subscriptions = subscriptions
        self.nonSubscriptions = nonSubscriptions
        self.entitlements = entitlements
    }

    /// The entitlements to report: the given ones, or those derived from `productEntitlements`.
    func resolvedEntitlements(productEntitlements: [String: String]) -> [SimulatedEntitlement] {
        if let entitlements { return entitlements }
        var best: [String: SimulatedEntitlement] = [:]
        func consider(_ candidate: SimulatedEntitlement) {
            guard let current = best[candidate.identifier] else {
                best[candidate.identifier] = candidate
                return
            }
            let currentEnd = current.expiresDate ?? .distantFuture
            let candidateEnd = candidate.expiresDate ?? .distantFuture
            if candidateEnd > currentEnd { best[candidate.identifier] = candidate }
        }
        for subscription in subscriptions where subscription.refundedAt == nil {
            guard let name = productEntitlements[subscription.productID] else { continue }
            consider(
                SimulatedEntitlement(
                    identifier: name, productIdentifier: subscription.productID,
                    expiresDate: subscription.expiresDate,
                    gracePeriodExpiresDate: subscription.gracePeriodExpiresDate,
                    purchaseDate: subscription.purchaseDate))
        }
        for purchase in nonSubscriptions {
            guard let name = productEntitlements[purchase.productID] else { continue }
            consider(
                SimulatedEntitlement(
                    identifier: name, productIdentifier: purchase.productID, expiresDate: nil,
                    purchaseDate: purchase.purchaseDate))
        }
        return best.values.sorted { $0.identifier < $1.identifier }
    }
}

/// A scripted misbehaviour of the simulated RevenueCat for one user.
public enum RevenueCatFault: Sendable, Hashable {
    /// Answer this HTTP status with a `{code, message}` JSON body.
    case status(Int)
    /// Answer 429 with `backoff_ms` in the body and/or a `Retry-After` header (either may be nil).
    case rateLimited(backoffMS: Int?, retryAfter: String?)
    /// Answer 200 with a body that is not JSON.
    case malformedJSON
    /// Wait this long before answering normally (to provoke client timeouts).
    case delay(Duration)
    /// Answer exactly this: any status, headers and body bytes (hostile or malformed answers).
    case raw(status: Int, headers: [String: String], body: Data)
    /// Answer normally, but send the body one byte at a time with `pause` between bytes (a trickling peer).
    case trickle(pause: Duration)
}
