import Foundation
import PropertyBased
import SubreconCore
import Testing

@testable import Stripe

/// The buyer's account as Stripe states it (CONTRACT "Whose purchase it is"): `metadata.user_id` on the subscription, else on its expanded
/// customer; strictly a string of 1...500 characters, anything else not stated.
@Suite("Stripe: metadata.user_id, strictly")
struct StripeAccountTests {
    static func subscription(metadata: String = "{}", customer: String = #""cus_1""#) throws -> StripeSubscription {
        let body = #"""
            {"id": "sub_1", "object": "subscription", "status": "active", "livemode": true, "customer": \#(customer),
             "metadata": \#(metadata),
             "items": {"object": "list", "has_more": false, "data": [{"id": "si_1", "current_period_start": 1780000000,
               "current_period_end": 1782592000, "quantity": 1,
               "price": {"id": "price_1", "product": "prod_pro", "unit_amount": 999, "currency": "usd"}}]}}
            """#
        return try StripeSubscription.decode(body: Data(body.utf8))
    }

    @Test("the subscription's metadata.user_id is the account, kept as given, and reaches the purchase")
    func subscriptionMetadata() throws {
        let subscription = try Self.subscription(metadata: #"{"user_id": "User-42 "}"#)
        #expect(subscription.accountToken == "User-42 ")
        let facts = try StripeMapping.storeFacts(subscription).get()
        #expect(facts.map(\.purchase.accountToken) == ["User-42 "])
    }

    @Test("an expanded customer's metadata.user_id is the account when the subscription states none")
    func expandedCustomer() throws {
        let expanded = #"{"id": "cus_9", "object": "customer", "metadata": {"user_id": "u-9"}}"#
        let subscription = try Self.subscription(customer: expanded)
        #expect(subscription.customer == "cus_9")
        #expect(subscription.accountToken == "u-9")
        // The subscription's own wins over its customer's.
        let both = try Self.subscription(metadata: #"{"user_id": "u-sub"}"#, customer: expanded)
        #expect(both.accountToken == "u-sub")
        // A customer given as an id string, in an answer that never asked for it expanded (an event's snapshot), states
        // no account; in an answer that did ask, its buyer is unknown and the mapping fails the user closed.
        #expect(try Self.subscription(customer: #""cus_9""#).statedBuyer == StripeStatedBuyer.none)
        var asked = try Self.subscription(customer: #""cus_9""#)
        asked.customerExpansionAsked = true
        #expect(asked.statedBuyer == .unknown(customer: "cus_9") && asked.accountToken == nil)
        #expect((try? StripeMapping.storeFacts(asked).get()) == nil)
        var askedAndGiven = try Self.subscription(customer: expanded)
        askedAndGiven.customerExpansionAsked = true
        #expect(askedAndGiven.accountToken == "u-9")
        // A blank user_id on the subscription states none: it never hides the customer's.
        for blank in [#"{"user_id": " "}"#, #"{"user_id": "\t\n"}"#] {
            #expect(try Self.subscription(metadata: blank, customer: expanded).accountToken == "u-9", "\(blank)")
            #expect(try Self.subscription(metadata: blank).accountToken == nil, "\(blank)")
        }
    }

    @Test("a user_id that is not a string of 1...500 characters, or metadata that is not an object, is not stated")
    func hostile() throws {
        let values = [
            #"{"user_id": 42}"#, #"{"user_id": true}"#, #"{"user_id": null}"#, #"{"user_id": {"id": "u"}}"#,
            #"{"user_id": ["u"]}"#, #"{"user_id": ""}"#, #"{"user_id": "\#(String(repeating: "x", count: 501))"}"#,
            #""user_id=u""#, "[]", "null", "7", #"{"userId": "u"}"#,
        ]
        for metadata in values {
            let subscription = try Self.subscription(metadata: metadata)
            #expect(subscription.accountToken == nil, "\(metadata.prefix(40))")
            // The subscription itself is still read: the account decides ownership only.
            #expect(try StripeMapping.storeFacts(subscription).get().count == 1)
        }
        let customerValues = [
            #"{"id": "cus_9", "metadata": {"user_id": 9}}"#, #"{"id": "cus_9", "metadata": "u"}"#, #"{"id": "cus_9"}"#,
        ]
        for customer in customerValues {
            let subscription = try Self.subscription(customer: customer)
            #expect(subscription.customer == "cus_9")
            #expect(subscription.accountToken == nil, "\(customer)")
        }
    }

    @Test(
        "property: any JSON value as user_id is the account exactly when it is a string of 1...500 characters, not all whitespace"
    )
    func anyValue() async {
        let alphabet: [Character] = Array("ab-_ 9é\"\\/\u{0}")
        await propertyCheck(
            count: 500, input: Gen.element(of: alphabet).array(of: 0...520), Gen.int(in: 0...4)
        ) { picked, shape in
            let characters = picked.compactMap { $0 }
            let text = String(characters)
            let encoded = String(decoding: try! JSONEncoder().encode(text), as: UTF8.self)
            let value = [encoded, "[\(encoded)]", "{\"v\": \(encoded)}", "\(characters.count)", "false"][shape]
            let subscription = try? Self.subscription(metadata: "{\"user_id\": \(value)}")
            // The body is sanitized first (a NUL becomes visible text): the limit applies to what is read. Blank or
            // whitespace-only states no account (CONTRACT "Whose purchase it is").
            let visible = SourceText.sanitized(text)
            let stated = visible.contains { !$0.isWhitespace } && visible.count <= 500
            let expected: String? = shape == 0 && stated ? visible : nil
            #expect(subscription?.accountToken == expected, "\(value.prefix(40))")
        }
    }

    @Test("a subscription event's snapshot states its purchase, with the account of its metadata")
    func eventSnapshot() throws {
        let body = #"""
            {"object": "list", "has_more": false, "data": [{"id": "evt_1", "object": "event",
             "type": "customer.subscription.updated", "created": 1781000000, "livemode": true,
             "data": {"object": {"id": "sub_1", "object": "subscription", "customer": "cus_1", "status": "active",
               "livemode": true, "metadata": {"user_id": "u-1"}, "items": {"object": "list", "has_more": false, "data": [
               {"id": "si_1", "current_period_start": 1780000000, "current_period_end": 1782592000, "quantity": 1,
                "price": {"id": "price_1", "product": "prod_pro", "unit_amount": 999, "currency": "usd"}}]}}}}]}
            """#
        let event = try #require(try StripeEventList.decode(body: Data(body.utf8)).data.first)
        let purchases = event.statedPurchases
        #expect(purchases.map(\.customer) == ["cus_1"])
        #expect(purchases.map(\.purchase.accountToken) == ["u-1"])
        #expect(purchases.map(\.purchase.productID) == ["prod_pro"])
    }
}
