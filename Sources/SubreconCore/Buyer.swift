import Foundation

/// Who bought a purchase, as its source states it (CONTRACT "Whose purchase it is"). Every `PurchaseFact` states one:
/// it is a required part of the fact, so a mapping that forgets the buyer does not compile.
///
/// - `account`: the store names the buyer's account (Apple `appAccountToken` in the verified signed transaction,
///   Google `obfuscatedExternalAccountId`, Stripe `metadata.user_id` on the subscription, its customer or the Checkout
///   Session of a one-time payment, or that session's `client_reference_id`), normalised by `BuyerAccount`;
/// - `unstated`: the store could name a buyer here and did not (the app never set one);
/// - `byListing`: the source never names buyers; it attributes a purchase to the user whose answer lists it
///   (RevenueCat).
public enum Buyer: Sendable, Hashable, Codable {
    case account(BuyerAccount)
    case unstated
    case byListing

    /// The buyer `text` names for a purchase of `store`: `unstated` when it is absent, empty or whitespace only.
    public static func stated(_ text: String?, store: StoreKind) -> Buyer {
        BuyerAccount(text, store: store).map(Buyer.account) ?? .unstated
    }

    /// The stated account, when the store named one.
    public var account: BuyerAccount? {
        if case .account(let account) = self { return account }
        return nil
    }
}

/// A buyer's account as a store names it, normalised once where it is read: an Apple `appAccountToken` is a UUID,
/// kept lower-cased and compared without case; every other store's account is kept and compared exactly.
public struct BuyerAccount: Sendable, Hashable, Codable, Comparable {
    /// The account as compared: lower-cased for Apple, exactly as stated otherwise.
    public var value: String
    /// True for an Apple token (compared case-insensitively).
    public var ignoresCase: Bool

    /// nil when `text` is absent, empty or whitespace only.
    public init?(_ text: String?, store: StoreKind) {
        guard let text = normalisedIdentifier(text) else { return nil }
        ignoresCase = store.isApple
        value = ignoresCase ? text.lowercased() : text
    }

    /// An account already normalised (as read back from the database).
    public init(stated value: String, ignoresCase: Bool) {
        self.value = ignoresCase ? value.lowercased() : value
        self.ignoresCase = ignoresCase
    }

    /// True when `candidate` (a user id or an `account_token`) names this account.
    public func matches(_ candidate: String?) -> Bool {
        guard let candidate = normalisedIdentifier(candidate) else { return false }
        return ignoresCase ? candidate.lowercased() == value : candidate == value
    }

    public static func < (lhs: BuyerAccount, rhs: BuyerAccount) -> Bool {
        (lhs.value, lhs.ignoresCase ? 1 : 0) < (rhs.value, rhs.ignoresCase ? 1 : 0)
    }
}

/// An identifier or account as read from a row or a source: nil when absent, empty or whitespace only (CONTRACT
/// "Whose purchase it is": `''` is none, never a value); otherwise exactly as given.
public func normalisedIdentifier(_ text: String?) -> String? {
    guard let text, text.contains(where: { !$0.isWhitespace && !$0.isNewline }) else { return nil }
    return text
}
