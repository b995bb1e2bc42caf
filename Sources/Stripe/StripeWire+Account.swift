import Foundation
import SubreconCore

// The buyer's account as Stripe states it (CONTRACT "Whose purchase it is"): `metadata.user_id` on the subscription, else on its customer
// when the customer object is expanded (`expand[]=data.customer`). Strict: only a JSON string of 1...500 characters
// (Stripe's own limit for a metadata value) is an account; a number, a boolean, an object, null, an empty or longer
// string is "not stated" (nil), never a guess, and never a failure of the user (the account only decides ownership).
// Foundation and SubreconCore only: `scripts/fuzz` compiles it into the fuzz target.

/// Reads `metadata.user_id` strictly.
public enum StripeAccount {
    /// The metadata key the app writes the buyer's account under.
    public static let metadataKey = "user_id"
    /// Stripe's limit on a metadata value.
    public static let maxLength = 500

    enum MetadataKeys: String, CodingKey { case userID = "user_id" }
    enum CustomerKeys: String, CodingKey { case metadata }

    /// `container[key].user_id` when `key` is a metadata object and its `user_id` an account (`account(_:)`).
    static func userID<Key: CodingKey>(in container: KeyedDecodingContainer<Key>, forKey key: Key) -> String? {
        guard let metadata = try? container.nestedContainer(keyedBy: MetadataKeys.self, forKey: key) else { return nil }
        return account(metadata.lenientString(.userID))
    }

    /// `container[key].metadata.user_id` when `key` is an expanded customer object; nil for an id string.
    static func customerUserID<Key: CodingKey>(in container: KeyedDecodingContainer<Key>, forKey key: Key) -> String? {
        guard let customer = try? container.nestedContainer(keyedBy: CustomerKeys.self, forKey: key) else { return nil }
        return userID(in: customer, forKey: .metadata)
    }

    /// Whether `container[key]` is the customer as a bare id string (`"cus_…"`) rather than the object.
    static func isBareID<Key: CodingKey>(in container: KeyedDecodingContainer<Key>, forKey key: Key) -> Bool {
        (try? container.decode(String.self, forKey: key)) != nil
    }

    /// The buyer an object states: the first of `own` that names an account; else, when the customer's expansion was
    /// asked for and Stripe answered its bare id, unknown; else the expanded customer's account, or nobody.
    static func buyer(own: [String?], customer: String?, customerUserID: String?, unexpanded: Bool) -> StripeStatedBuyer {
        if let account = own.lazy.compactMap(normalisedIdentifier).first { return .account(account) }
        if unexpanded, let customer { return .unknown(customer: customer) }
        return normalisedIdentifier(customerUserID).map(StripeStatedBuyer.account) ?? .none
    }

    /// `text` when it can name an account: 1...`maxLength` characters, kept exactly as given; nil otherwise.
    public static func account(_ text: String?) -> String? {
        guard let text, !text.isEmpty, text.count <= maxLength else { return nil }
        return text
    }
}

/// The buyer a Stripe subscription or Checkout Session states (CONTRACT "Whose purchase it is").
public enum StripeStatedBuyer: Sendable, Hashable {
    /// The account the object's own fields, or its expanded customer's `metadata.user_id`, name.
    case account(String)
    /// Nobody: neither the object nor its customer (expanded, or never asked to be) names an account.
    case none
    /// The object names none of its own, and its customer, asked for expanded (`expand[]=data.customer`), came back
    /// as a bare id: the customer's `metadata.user_id` is unknown, never "nobody" (CONTRACT "Whose purchase it is").
    case unknown(customer: String)

    /// The account, when one is stated.
    public var account: String? {
        if case .account(let account) = self { return account }
        return nil
    }

    /// The core's buyer of `object` (operator text: "subscription sub_1"), or the error failing the user closed
    /// when it is unknown.
    func buyer(of object: String) -> Result<Buyer, SourceError> {
        switch self {
        case .account(let account): return .success(.stated(account, store: .stripe))
        case .none: return .success(.unstated)
        case .unknown(let customer):
            let message =
                "Stripe answered \(object) with its customer \(String(customer.prefix(80))) as a bare id, not the object asked "
                + "for (expand[]=data.customer): its buyer (the customer's metadata.user_id) is unknown"
            return .failure(SourceError(origin: .stripe, kind: .fetch, message: message))
        }
    }
}

/// A Stripe object whose customer a request may ask expanded (`expand[]=data.customer`).
public protocol StripeCustomerExpandable {
    /// True on an object read from an answer to a request that asked for its customer expanded (set by the client).
    var customerExpansionAsked: Bool { get set }
}

extension StripeList where Element: StripeCustomerExpandable {
    /// The list as read from an answer to a request that asked for each element's customer expanded.
    public func askedCustomerExpanded() -> StripeList {
        var list = self
        for index in list.data.indices { list.data[index].customerExpansionAsked = true }
        return list
    }
}

extension StripeSubscription: StripeCustomerExpandable {
    /// The buyer Stripe states for this subscription (CONTRACT "Whose purchase it is"): its own `metadata.user_id`,
    /// else its expanded customer's; unknown when the customer was asked expanded and came as a bare id; nobody when
    /// neither states one (empty or whitespace only states none, as everywhere).
    public var statedBuyer: StripeStatedBuyer {
        StripeAccount.buyer(
            own: [metadataUserID], customer: customer, customerUserID: customerUserID,
            unexpanded: customerExpansionAsked && customerIsBareID)
    }

    /// The stated account; nil when nobody is stated or the buyer is unknown (`statedBuyer` tells them apart).
    public var accountToken: String? { statedBuyer.account }
}
