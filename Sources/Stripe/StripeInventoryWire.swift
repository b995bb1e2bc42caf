import Foundation
import SubreconCore

// The Stripe inventory's pages (CONTRACT "Which users a run asks about": `GET /v1/subscriptions?status=…&expand[]=data.customer`), decoded
// strictly: a page is the usual list (`StripeList`: `data` an array of objects, `has_more` read by the client), and
// every element must be a subscription with a non-empty `id` (the cursor) and a customer (an id string or an expanded
// customer's `id`: the value of the row's `stripe_customer_id`). An element without either makes the page malformed
// and the whole inventory unused: a list read in part is never taken for the whole (CONTRACT "Hostile answers and bounded work").
//
// Foundation and SubreconCore only: `scripts/fuzz` compiles it into the fuzz target ('I').

/// A purchase a Stripe list or event states (a live subscription, a refunded charge), with the customer it belongs to
/// (the identifier a row would hold).
public struct StripeCustomerPurchase: Sendable, Hashable {
    public var customer: String
    public var purchase: PurchaseFact

    public init(customer: String, purchase: PurchaseFact) {
        self.customer = customer
        self.purchase = purchase
    }
}

/// One page of the inventory, strictly.
public enum StripeInventoryPage {
    /// The page, or a `DecodingError` naming what is wrong (a body that is not a list, an element that is not a
    /// subscription with an id and a customer).
    public static func decode(body: Data) throws -> StripeSubscriptionList {
        let list = try StripeSubscriptionList.decode(body: body)
        for (index, subscription) in list.data.enumerated() {
            let at = [IndexKey(stringValue: "data"), IndexKey(intValue: index)]
            if let object = subscription.object, object != "subscription" {
                throw DecodingError.dataCorrupted(.init(codingPath: at, debugDescription: "not a subscription"))
            }
            guard let id = subscription.id, !id.isEmpty else {
                throw DecodingError.keyNotFound(IndexKey(stringValue: "id"), .init(codingPath: at, debugDescription: "no id"))
            }
            guard let customer = subscription.customer, !customer.isEmpty else {
                throw DecodingError.keyNotFound(
                    IndexKey(stringValue: "customer"), .init(codingPath: at, debugDescription: "no customer"))
            }
        }
        return list
    }

    /// The purchases the listed subscriptions state, mapped as a lookup maps them (`StripeMapping.storeFacts`, with
    /// `accountToken` from `metadata.user_id`), one per item, each with its customer. A subscription the mapping
    /// cannot read (an unknown status, unusable dates, part of its items) states no purchase: its customer is still
    /// named (a lookup then judges it), it is never linked or listed as an orphan on a guess.
    public static func purchases(_ subscriptions: [StripeSubscription]) -> [StripeCustomerPurchase] {
        subscriptions.flatMap { subscription -> [StripeCustomerPurchase] in
            guard let customer = subscription.customer, !customer.isEmpty,
                case .success(let facts) = StripeMapping.storeFacts(subscription)
            else { return [] }
            return facts.map { StripeCustomerPurchase(customer: customer, purchase: $0.purchase) }
        }
    }
}

/// A coding path element for the errors above.
struct IndexKey: CodingKey {
    var stringValue: String
    var intValue: Int?
    init(stringValue: String) { self.stringValue = stringValue }
    init(intValue: Int) {
        self.stringValue = String(intValue)
        self.intValue = intValue
    }
}
