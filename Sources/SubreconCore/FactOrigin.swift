import Foundation

// The one place in the core that names the stores: the enum a new store adds its case to (the compiler then shows
// every exhaustive switch over it, all in this file). Everything else about a store (its `users` column, feed,
// request budget, configuration) is declared by its adapter in the composition root's `StoreRegistry`.

/// Which system a fact came from; the raw values are the names of CONTRACT "Reports"'s `sources` column.
public enum FactOrigin: String, Sendable, Codable, Hashable, CaseIterable {
    case revenueCat = "revenuecat"
    /// The App Store Server API.
    case appStore = "app_store"
    /// Apple's legacy `verifyReceipt` (a stored receipt).
    case appStoreReceipt = "app_store_receipt"
    case stripe
    case googlePlay = "google_play"

    /// The store whose purchases this source is the authority for (CONTRACT "Sources and the decision"); nil for RevenueCat, which aggregates.
    public var authorityStore: StoreKind? {
        switch self {
        case .revenueCat: nil
        case .appStore, .appStoreReceipt: .appStore
        case .stripe: .stripe
        case .googlePlay: .playStore
        }
    }

    /// True when the row's identifier for this source (`UserRow.identifiers[origin]`) names a purchase line itself
    /// (Google's purchase token), false when it names an account holding several (Stripe's customer id).
    public var identifierNamesLine: Bool {
        switch self {
        case .googlePlay: true
        case .revenueCat, .appStore, .appStoreReceipt, .stripe: false
        }
    }

    /// What "unknown at source" says when this source answered that it does not know the user's identifier
    /// (absence); nil for RevenueCat, whose unknown subscriber is said apart.
    public var absenceText: String? {
        switch self {
        case .revenueCat: nil
        case .appStore, .appStoreReceipt: "Apple does not know its transaction id either"
        case .stripe: "Stripe does not know its customer or subscription"
        case .googlePlay: "Google Play does not know its purchase token"
        }
    }
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

    /// The `users.subscription_source` value for this store (CONTRACT "Database"); other stores keep their own name.
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

    /// The forms an id of this store takes for the same purchase line (CONTRACT "Whose purchase it is"): the id itself, and for Google Play
    /// an order id without its renewal suffix (`GPA.1234-5678-9012-34567..3` → `GPA.1234-5678-9012-34567`).
    public func lineKeys(of id: String) -> [String] {
        guard self == .playStore, let range = id.range(of: "..", options: .backwards) else { return [id] }
        let suffix = id[range.upperBound...]
        guard !suffix.isEmpty, suffix.allSatisfy({ $0.isASCII && $0.isNumber }) else { return [id] }
        return [String(id[..<range.lowerBound]), id]
    }

    /// The store named by a `users.subscription_source` value (the inverse of `subscriptionSource`).
    public init(subscriptionSource source: String) {
        switch source {
        case "apple_iap": self = .appStore
        case "google_iap": self = .playStore
        default: self.init(rawValue: source)
        }
    }
}

/// A `users` column that holds one store's identifiers (CONTRACT "Database"), as the store's adapter declares it in the
/// registry: the database selects it into `UserRow.identifiers[origin]`, a feed finds rows by it, `explain` shows it.
public struct IdentifierColumn: Sendable, Hashable {
    /// The source that asks by this identifier.
    public var origin: FactOrigin
    /// The column's name in `users` (a trusted constant of the adapter, never outside input).
    public var name: String
    /// How `explain`'s row line names it (`stripe`).
    public var label: String
    /// False for a bearer-like token that `explain`'s text shows only as `(token set)`.
    public var showsValue: Bool

    public init(origin: FactOrigin, name: String, label: String, showsValue: Bool) {
        self.origin = origin
        self.name = name
        self.label = label
        self.showsValue = showsValue
    }
}
