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

    /// `text` when it can name an account: 1...`maxLength` characters, kept exactly as given; nil otherwise.
    public static func account(_ text: String?) -> String? {
        guard let text, !text.isEmpty, text.count <= maxLength else { return nil }
        return text
    }
}

extension StripeSubscription {
    /// The buyer's account Stripe states for this subscription (CONTRACT "Whose purchase it is"): its own `metadata.user_id`, else its
    /// expanded customer's; nil when neither states one (empty or whitespace only states none, as everywhere).
    public var accountToken: String? { [metadataUserID, customerUserID].lazy.compactMap(normalisedIdentifier).first }
}
