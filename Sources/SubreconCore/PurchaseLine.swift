import Foundation

/// The purchase line a fact is about (CONTRACT "Whose purchase it is"): one store's purchase, keyed by the store's stable ids. Two facts
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

    /// The line a purchase of `store` names by `ids`, each also in the forms the store's ids take for the same line
    /// (`StoreKind.lineKeys(of:)`: a Google order id without its renewal suffix).
    public static func of(store: StoreKind, ids: [String?]) -> PurchaseLine? {
        PurchaseLine(store: store, keys: ids.compactMap { $0 }.flatMap(store.lineKeys(of:)))
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
