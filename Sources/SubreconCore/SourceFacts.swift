import Foundation

/// Which system a fact came from.
public enum FactOrigin: String, Sendable, Codable, Hashable {
    case revenueCat = "revenuecat"
    case appStore = "app_store"
}

/// The store a purchase was made in, as RevenueCat names it (`app_store`, `play_store`, `stripe`, ...).
public struct StoreKind: RawRepresentable, Sendable, Hashable, Codable, CustomStringConvertible {
    public var rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue.lowercased() }

    public static let appStore = StoreKind(rawValue: "app_store")
    public static let macAppStore = StoreKind(rawValue: "mac_app_store")
    public static let playStore = StoreKind(rawValue: "play_store")
    public static let stripe = StoreKind(rawValue: "stripe")
    public static let promotional = StoreKind(rawValue: "promotional")

    public var isApple: Bool { self == .appStore || self == .macAppStore }

    /// The `users.subscription_source` value for this store (SPEC section 4); other stores keep their own name.
    public var subscriptionSource: String {
        switch self {
        case .appStore, .macAppStore: "apple_iap"
        case .playStore: "google_iap"
        case .stripe: "stripe"
        case .promotional: "promotional"
        default: rawValue
        }
    }

    public var description: String { rawValue }

    /// The store named by a `users.subscription_source` value (the inverse of `subscriptionSource`).
    public init(subscriptionSource source: String) {
        switch source {
        case "apple_iap": self = .appStore
        case "google_iap": self = .playStore
        default: self.init(rawValue: source)
        }
    }
}

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

/// One purchase (subscription or one-time) as one source describes it.
public struct PurchaseFact: Sendable, Hashable, Codable {
    public var origin: FactOrigin
    public var productID: String
    public var store: StoreKind
    public var isSandbox: Bool
    /// True for a non-subscription (one-time / lifetime) purchase.
    public var isLifetime: Bool
    public var purchaseDate: Date?
    /// End of the current paid period; nil for lifetime purchases.
    public var expiresDate: Date?
    public var gracePeriodExpiresDate: Date?
    /// Refund or revocation instant.
    public var refundedAt: Date?
    public var billingIssueDetectedAt: Date?
    /// nil when the source does not say.
    public var autoRenew: Bool?
    public var isPaused: Bool
    public var originalTransactionID: String?
    public var storeTransactionID: String?
    public var price: Money?

    public init(
        origin: FactOrigin = .revenueCat, productID: String, store: StoreKind, isSandbox: Bool = false,
        isLifetime: Bool = false, purchaseDate: Date? = nil, expiresDate: Date? = nil,
        gracePeriodExpiresDate: Date? = nil, refundedAt: Date? = nil, billingIssueDetectedAt: Date? = nil,
        autoRenew: Bool? = nil, isPaused: Bool = false, originalTransactionID: String? = nil,
        storeTransactionID: String? = nil, price: Money? = nil
    ) {
        self.origin = origin
        self.productID = productID
        self.store = store
        self.isSandbox = isSandbox
        self.isLifetime = isLifetime
        self.purchaseDate = purchaseDate
        self.expiresDate = expiresDate
        self.gracePeriodExpiresDate = gracePeriodExpiresDate
        self.refundedAt = refundedAt
        self.billingIssueDetectedAt = billingIssueDetectedAt
        self.autoRenew = autoRenew
        self.isPaused = isPaused
        self.originalTransactionID = originalTransactionID
        self.storeTransactionID = storeTransactionID
        self.price = price
    }
}

extension PurchaseFact {
    /// An auto-renewable App Store (or Mac App Store) subscription: what the App Store Server API answers about.
    public var isAppStoreSubscription: Bool { store.isApple && !isLifetime }
}

/// Apple's view of one App Store subscription, fetched with `lookupTransactionID`.
public struct AppleSubscriptionFact: Sendable, Hashable, Codable {
    /// The transaction id the App Store Server API was asked about.
    public var lookupTransactionID: String
    /// The decoded, verified facts (origin `.appStore`).
    public var purchase: PurchaseFact
    public init(lookupTransactionID: String, purchase: PurchaseFact) {
        self.lookupTransactionID = lookupTransactionID
        self.purchase = purchase
    }
}

/// Why a source could not be believed for a user.
public struct SourceError: Sendable, Hashable, Codable, Error {
    public enum Kind: String, Sendable, Codable, Hashable {
        /// network, HTTP status, timeout, rate limit exhausted, malformed body
        case fetch
        /// a signed payload failed verification
        case verification
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

/// Everything the sources said about one user.
public struct SourceFacts: Sendable, Hashable {
    /// False when RevenueCat answered 201 (just created) or with an empty subscriber.
    public var subscriberKnown: Bool
    /// RevenueCat's subscriptions and non-subscriptions.
    public var purchases: [PurchaseFact]
    /// Apple's verified views of App Store subscriptions (empty when Apple is not configured).
    public var apple: [AppleSubscriptionFact]
    public var errors: [SourceError]

    public init(
        subscriberKnown: Bool, purchases: [PurchaseFact], apple: [AppleSubscriptionFact] = [],
        errors: [SourceError] = []
    ) {
        self.subscriberKnown = subscriberKnown
        self.purchases = purchases
        self.apple = apple
        self.errors = errors
    }

    public static func failed(_ error: SourceError) -> SourceFacts {
        SourceFacts(subscriberKnown: false, purchases: [], errors: [error])
    }
}
