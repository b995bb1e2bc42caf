import Foundation

/// A price as the source states it. Never guessed: absent when the source did not say.
public struct Money: Sendable, Hashable, Codable {
    public var amount: Decimal
    public var currency: String
    /// `amount` is rounded to 6 decimal places: prices decoded through binary floating point
    /// (9.99 → 9.9900000000000002) must add up to what the source said.
    public init(amount: Decimal, currency: String) {
        var value = amount
        var rounded = Decimal()
        NSDecimalRound(&rounded, &value, 6, .plain)
        self.amount = rounded
        self.currency = currency.uppercased()
    }
}

/// What kind of purchase a source says it is. Decides whether a purchase may entitle without an end date.
public enum PurchaseKind: String, Sendable, Codable, Hashable, CaseIterable {
    /// An auto-renewable subscription (RevenueCat `subscriptions`, Apple `Auto-Renewable Subscription`): entitles
    /// only until a stated end; without one it is unknown, never lifetime.
    case subscription
    /// A non-renewing purchase (a pass): ends at its stated expiry (RevenueCat: its entitlement's `expires_date`).
    case nonRenewing = "non_renewing"
    /// A non-consumable / lifetime purchase as the source states it (RevenueCat `non_subscriptions` whose entitlement
    /// has `expires_date: null`, Apple `Non-Consumable`): entitles without an end date.
    case nonExpiring = "non_expiring"
    /// A one-time purchase whose kind the source has not stated (yet): a RevenueCat `non_subscriptions` item before
    /// the entitlements are read, a receipt entry without an expiry. Never entitles, never ends anything.
    case unstated
}

/// A status the store itself states for a purchase. Evidence on its own, besides the dates.
///
/// Apple's `status` (1 active, 2 expired, 3 billing retry, 4 billing grace period, 5 revoked), Stripe's subscription
/// `status` and Google Play's `subscriptionState` map onto these (each module documents its mapping).
public enum StoreState: String, Sendable, Codable, Hashable, CaseIterable {
    /// Paid and running: entitles until the stated end; a stated end at or before T is a contradiction (unknown).
    case active
    /// Over: never entitles.
    case expired
    /// The store is retrying a failed renewal; entitles only until the stated end or grace end.
    case billingRetry = "billing_retry"
    /// In billing grace: entitles (`billing_issue`) until the stated grace end, or while the store says so.
    case gracePeriod = "grace_period"
    /// Refunded or revoked: never entitles.
    case revoked
    /// Paused by the user or the store: never entitles (`paused`).
    case paused
    /// Created but never paid (Stripe `incomplete`, Google `PENDING`): never entitles.
    case pending

    /// Apple's numeric `status`; nil for a value Apple does not document.
    public init?(appleStatus: Int) {
        switch appleStatus {
        case 1: self = .active
        case 2: self = .expired
        case 3: self = .billingRetry
        case 4: self = .gracePeriod
        case 5: self = .revoked
        default: return nil
        }
    }
}

/// One purchase (subscription or one-time) as one source describes it.
///
/// Every optional field is nil when the source did not state it (missing, null or unparsable): nil is *unknown*,
/// never a default. The rules of `judge` decide what may be concluded without it.
public struct PurchaseFact: Sendable, Hashable, Codable {
    public var origin: FactOrigin
    public var productID: String
    public var store: StoreKind
    public var kind: PurchaseKind
    /// nil when the source did not say (then the purchase cannot entitle in a production run).
    public var isSandbox: Bool?
    /// Start of the period being judged (the latest purchase or renewal).
    public var purchaseDate: Date?
    /// End of the current paid period as stated; nil when not stated.
    public var expiresDate: Date?
    public var gracePeriodExpiresDate: Date?
    /// Refund or revocation instant.
    public var refundedAt: Date?
    public var billingIssueDetectedAt: Date?
    /// nil when the source does not say.
    public var autoRenew: Bool?
    public var isPaused: Bool
    /// The store's own status for the purchase, when it states one (Apple).
    public var storeState: StoreState?
    public var originalTransactionID: String?
    public var storeTransactionID: String?
    /// What was paid for the period being judged (the transaction's own price: an offer or introductory price when
    /// that is what was charged); nil when the source did not say.
    public var price: Money?
    /// The price of the next renewal as the source states it (Apple `renewalPrice`, Google `recurringPrice`,
    /// Stripe `unit_amount` × quantity, RevenueCat `price` in a `normal` period); nil when not stated.
    public var renewalPrice: Money?
    /// Family shared or bought; nil when the source did not say.
    public var ownership: Ownership?
    /// Trial, introductory/offer or normal period; nil when the source did not say.
    public var periodType: PeriodType?
    /// Other ids the same product is known by, tried in order when `productID` is not in `product_tiers` (Stripe:
    /// the price id `price_…` after the product id `prod_…`, CONTRACT "Sources and the decision").
    public var alternateProductIDs: [String] = []
    /// The store's id of the refunded payment when it is not the purchase's own transaction id (Stripe: the
    /// refunded payment intent `pi_…`, else charge `ch_…`, of the period's invoice); the refund review keys the
    /// refund by it (CONTRACT "Finance figures"), so a refund seen in a feed and in a lookup is one row.
    public var refundTransactionID: String?
    /// The purchase line this fact is about (CONTRACT "Whose purchase it is"); nil when its source named none (then no other fact is
    /// known to be about the same purchase).
    public var line: PurchaseLine?
    /// Who bought it, as the source states it (`Buyer`): required, so no mapping can forget it.
    public var buyer: Buyer

    public init(
        origin: FactOrigin = .revenueCat, productID: String, store: StoreKind, kind: PurchaseKind = .subscription,
        isSandbox: Bool?, purchaseDate: Date? = nil, expiresDate: Date? = nil,
        gracePeriodExpiresDate: Date? = nil, refundedAt: Date? = nil, billingIssueDetectedAt: Date? = nil,
        autoRenew: Bool? = nil, isPaused: Bool = false, storeState: StoreState? = nil, originalTransactionID: String? = nil,
        storeTransactionID: String? = nil, price: Money? = nil, renewalPrice: Money? = nil, ownership: Ownership? = nil,
        periodType: PeriodType? = nil, line: PurchaseLine?, buyer: Buyer
    ) {
        self.origin = origin
        self.productID = productID
        self.store = store
        self.kind = kind
        self.isSandbox = isSandbox
        self.purchaseDate = purchaseDate
        self.expiresDate = expiresDate
        self.gracePeriodExpiresDate = gracePeriodExpiresDate
        self.refundedAt = refundedAt
        self.billingIssueDetectedAt = billingIssueDetectedAt
        self.autoRenew = autoRenew
        self.isPaused = isPaused
        self.storeState = storeState
        self.originalTransactionID = originalTransactionID
        self.storeTransactionID = storeTransactionID
        self.price = price
        self.renewalPrice = renewalPrice
        self.ownership = ownership
        self.periodType = periodType
        self.line = line
        self.buyer = buyer
    }

    /// The buyer's account the store stated (normalised: `BuyerAccount`); nil when it stated none.
    public var accountToken: String? { buyer.account?.value }

    /// True for a purchase the source states is non-expiring (lifetime).
    public var isLifetime: Bool { kind == .nonExpiring }
}

/// The end of an entitlement as RevenueCat states it: `expires_date` may be a date, an explicit `null` (lifetime),
/// or missing altogether (unknown).
public enum StatedExpiry: Sendable, Hashable, Codable {
    case at(Date)
    /// `"expires_date": null`: the entitlement does not expire.
    case never
    /// The key was absent: nothing is known.
    case unstated
}

/// One RevenueCat entitlement as stated: which product RevenueCat says grants it, and until when. RevenueCat lists
/// expired entitlements too, and names the purchase with the furthest-out expiry.
public struct EntitlementFact: Sendable, Hashable, Codable {
    public var identifier: String
    /// nil when RevenueCat did not name it ("might temporarily be unavailable").
    public var productID: String?
    public var expires: StatedExpiry
    public var gracePeriodExpiresDate: Date?
    public var purchaseDate: Date?

    public init(
        identifier: String, productID: String?, expires: StatedExpiry, gracePeriodExpiresDate: Date? = nil,
        purchaseDate: Date? = nil
    ) {
        self.identifier = identifier
        self.productID = productID
        self.expires = expires
        self.gracePeriodExpiresDate = gracePeriodExpiresDate
        self.purchaseDate = purchaseDate
    }

    /// Whether the entitlement may grant access at `asOf`; an unstated expiry may.
    public func mayBeActive(at asOf: Date) -> Bool {
        if let grace = gracePeriodExpiresDate, grace > asOf { return true }
        switch expires {
        case .never, .unstated: return true
        case .at(let date): return date > asOf
        }
    }
}

extension PurchaseFact {
    /// An auto-renewable App Store (or Mac App Store) subscription: what the App Store Server API answers about.
    public var isAppStoreSubscription: Bool { store.isApple && kind == .subscription }
}

/// A store's own view of one of its purchases (Apple, Stripe, Google Play), fetched with `lookupID`. The store is
/// the authority for it over RevenueCat's view of the same purchase (CONTRACT "Sources and the decision").
public struct StoreFact: Sendable, Hashable, Codable {
    /// The identifier the store was asked about (Apple transaction id, Stripe customer or subscription id, Google
    /// purchase token).
    public var lookupID: String
    /// The decoded (and, for Apple, verified) facts; `purchase.origin` names the store's source.
    public var purchase: PurchaseFact
    /// Other identifiers RevenueCat may use for the same purchase (Stripe subscription item ids, Google order ids).
    public var aliases: [String]
    /// For a verified signed payload (Apple): the subject of the leaf certificate that signed it.
    public var signedBy: String?
    public init(lookupID: String, purchase: PurchaseFact, aliases: [String] = [], signedBy: String? = nil) {
        self.lookupID = lookupID
        self.purchase = purchase
        self.aliases = aliases
        self.signedBy = signedBy
    }

    /// Every identifier this purchase is known by.
    public var identifiers: Set<String> {
        Set([lookupID, purchase.originalTransactionID, purchase.storeTransactionID].compactMap { $0 } + aliases)
            .subtracting([""])
    }
}

/// Why a source could not be believed for a user.
public struct SourceError: Sendable, Hashable, Codable, Error {
    public enum Kind: String, Sendable, Codable, Hashable {
        /// network, HTTP status, timeout, rate limit exhausted, malformed body
        case fetch
        /// a signed payload failed verification, or its content contradicts itself
        case verification
        /// the answer would bind this user to a store purchase another user's row already holds
        case conflict
    }
    public var origin: FactOrigin
    public var kind: Kind
    /// Operator-facing message; never contains secrets.
    public var message: String
    public init(origin: FactOrigin, kind: Kind, message: String) {
        self.origin = origin
        self.kind = kind
        self.message = message
    }
}

/// Everything the sources said about one user. The `revenueCat…` fields are RevenueCat's answer alone; every store's
/// own answer is a `StoreFact` in `stores`.
public struct SourceFacts: Sendable, Hashable {
    /// True when RevenueCat was asked and knows the subscriber; false when it answered 201 (just created) or with an
    /// empty subscriber, or was not asked.
    public var revenueCatKnowsSubscriber: Bool
    /// RevenueCat's subscriptions and non-subscriptions.
    public var revenueCatPurchases: [PurchaseFact]
    /// RevenueCat's entitlements as stated (expired ones included).
    public var revenueCatEntitlements: [EntitlementFact]
    /// The stores' own views of their purchases (Apple verified, Stripe, Google Play): empty when none was asked.
    public var stores: [StoreFact]
    /// Sources asked that answered they do not know the user's identifier (Apple's 4040010, Stripe's or Google's
    /// 404): absence, not evidence.
    public var unknownTo: [FactOrigin] = []
    /// Every source asked for this user, in the order asked (CONTRACT "Reports" `sources`).
    public var asked: [FactOrigin] = []
    public var errors: [SourceError]
    /// Lines RevenueCat lists for this user that other rows name (a transfer): this user owns them.
    public var transfers: [LineTransfer] = []
    /// The row's own identifiers that other rows name while RevenueCat, answering in full, does not list their line
    /// for this user (by identifier, the other users): not known to be this user's (`ownership_conflict`).
    public var claimedElsewhere: [String: [String]] = [:]

    public init(
        revenueCatKnowsSubscriber: Bool, revenueCatPurchases: [PurchaseFact], revenueCatEntitlements: [EntitlementFact] = [],
        stores: [StoreFact] = [], errors: [SourceError] = []
    ) {
        self.revenueCatKnowsSubscriber = revenueCatKnowsSubscriber
        self.revenueCatPurchases = revenueCatPurchases
        self.revenueCatEntitlements = revenueCatEntitlements
        self.stores = stores
        self.errors = errors
    }

    /// Records that `origin` was asked (once).
    public mutating func noteAsked(_ origin: FactOrigin) {
        if !asked.contains(origin) { asked.append(origin) }
    }

    public static func failed(_ error: SourceError) -> SourceFacts {
        SourceFacts(revenueCatKnowsSubscriber: false, revenueCatPurchases: [], errors: [error])
    }
}
