import Foundation

/// The purchase line a fact is about (SPEC 5.10): one store's purchase, keyed by the store's stable ids. Two facts
/// are about the same line when they are of the same store and share a key. App Store: the original transaction id
/// (and the transaction ids RevenueCat or a lookup used); Google Play: the purchase token, the token it links to
/// (`linkedPurchaseToken`) and its order ids without their `..N` renewal suffix; Stripe: the subscription id (and its
/// item ids); RevenueCat: its entry's store transaction id in the store's form.
public struct PurchaseLine: Sendable, Hashable, Codable {
    /// The store the line is in (the Mac App Store is the App Store's family).
    public var store: StoreKind
    /// Every id known to name this line; never empty.
    public var keys: Set<String>

    /// nil when no key is stated (then the line is unknown, and no other fact is about it).
    public init?(store: StoreKind, keys: [String?]) {
        let stated = Set(keys.compactMap { $0 }.filter { !$0.isEmpty })
        guard !stated.isEmpty else { return nil }
        self.store = store.isApple ? .appStore : store
        self.keys = stated
    }

    /// The line a store's own purchase of `store` names by `ids`; Google order ids are taken without their suffix.
    public static func of(store: StoreKind, ids: [String?]) -> PurchaseLine? {
        let normalized = store == .playStore ? ids.map { $0.map(googleOrderBase) } + ids : ids
        return PurchaseLine(store: store, keys: normalized)
    }

    /// True when both name the same purchase: same store family and a shared key.
    public func isSame(as other: PurchaseLine) -> Bool {
        store == other.store && !keys.isDisjoint(with: other.keys)
    }

    /// This line with `more` keys (the ids a store was asked by, its aliases).
    public func adding(_ more: some Sequence<String>) -> PurchaseLine {
        var line = self
        line.keys.formUnion(more.filter { !$0.isEmpty })
        return line
    }

    /// A Google Play order id without its renewal suffix: `GPA.1234-5678-9012-34567..3` → `GPA.1234-5678-9012-34567`
    /// (SPEC 5.10: the order id names its line before the suffix).
    public static func googleOrderBase(_ orderID: String) -> String {
        guard let range = orderID.range(of: "..", options: .backwards) else { return orderID }
        let suffix = orderID[range.upperBound...]
        guard !suffix.isEmpty, suffix.allSatisfy({ $0.isASCII && $0.isNumber }) else { return orderID }
        return String(orderID[..<range.lowerBound])
    }
}

extension PurchaseFact {
    /// The line this fact is about: the one its mapping named, else the one its stated transaction ids name; nil
    /// when it states none.
    public var purchaseLine: PurchaseLine? {
        line ?? PurchaseLine.of(store: store, ids: [originalTransactionID, storeTransactionID])
    }

    /// Whether this fact and `other` are known to be about the same purchase line.
    public func isSameLine(as other: PurchaseFact) -> Bool {
        guard let line = purchaseLine, let theirs = other.purchaseLine else { return false }
        return line.isSame(as: theirs)
    }
}

extension StoreFact {
    /// The line this store fact is about: its purchase's line and every id the store was asked by or named.
    public var line: PurchaseLine? {
        let named = PurchaseLine.of(store: purchase.store, ids: identifiers.sorted())
        guard let own = purchase.purchaseLine else { return named }
        return own.adding(named?.keys ?? [])
    }
}
