import Foundation

/// A purchase a store feed or inventory named whose identifier no `users` row holds (CONTRACT "Whose purchase it is"): linked to the user
/// its store names as the buyer, else, when it entitles today, listed in `orphans.csv` and never acted on.
public struct UnlinkedPurchase: Sendable, Hashable {
    /// The source whose column would hold `identifier` (`FactOrigin.appStore` for `iap_original_transaction_id`).
    public var origin: FactOrigin
    /// The value of that column: Apple original transaction id, Google purchase token, Stripe customer id.
    public var identifier: String
    /// The purchase as the store stated it (its `accountToken` names the buyer, when stated).
    public var purchase: PurchaseFact

    public init(origin: FactOrigin, identifier: String, purchase: PurchaseFact) {
        self.origin = origin
        self.identifier = identifier
        self.purchase = purchase
    }

    /// The orphan this purchase is tonight, when it names no known account and entitles at `asOf` (never a sandbox
    /// purchase in a production run, never one whose stated facts do not decide it); nil otherwise.
    public func orphan(asOf: Date, environment: StoreEnvironment) -> Orphan? {
        if environment == .production && purchase.isSandbox != false { return nil }
        guard let judgement = Decision.judge(purchase, asOf: asOf).known, judgement.entitled else { return nil }
        return Orphan(
            origin: origin, identifier: identifier, productID: purchase.productID, status: judgement.status,
            endDate: judgement.expiresDate, accountToken: purchase.accountToken, price: purchase.renewalPrice ?? purchase.price)
    }
}

/// A paying purchase no row names and whose store names no known account (CONTRACT "Reports" `orphans.csv`): a list for a
/// person, never acted on. Kept across nights (`reconcile_orphans`), first and last night seen.
public struct Orphan: Sendable, Hashable, Codable {
    public var origin: FactOrigin
    public var identifier: String
    public var productID: String
    public var status: SubscriptionStatus
    public var endDate: Date?
    /// The buyer's account exactly as the store gave it; nil when it gave none.
    public var accountToken: String?
    public var price: Money?
    /// The first and last night (`--as-of` of a run) it was seen; set by the database that keeps them.
    public var firstSeen: Date?
    public var lastSeen: Date?

    public init(
        origin: FactOrigin, identifier: String, productID: String, status: SubscriptionStatus, endDate: Date?,
        accountToken: String?, price: Money?, firstSeen: Date? = nil, lastSeen: Date? = nil
    ) {
        self.origin = origin
        self.identifier = identifier
        self.productID = productID
        self.status = status
        self.endDate = endDate
        self.accountToken = accountToken
        self.price = price
        self.firstSeen = firstSeen
        self.lastSeen = lastSeen
    }
}

/// A purchase linked to a user tonight (CONTRACT "Whose purchase it is"): the user whose id or `account_token` its store named.
public struct PurchaseLink: Sendable, Hashable, Codable {
    public var userID: String
    public var origin: FactOrigin
    public var identifier: String

    public init(userID: String, origin: FactOrigin, identifier: String) {
        self.userID = userID
        self.origin = origin
        self.identifier = identifier
    }
}
