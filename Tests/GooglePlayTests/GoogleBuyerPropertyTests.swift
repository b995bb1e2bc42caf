import Foundation
import PropertyBased
import SubreconCore
import Testing

@testable import GooglePlay

/// Every fact Google's answers map to states its buyer (CONTRACT "Whose purchase it is"): the account Google names, a
/// subscription's `externalAccountIdentifiers.obfuscatedExternalAccountId` or a one-time product's top-level
/// `obfuscatedExternalAccountId`, kept exactly (case included); absent, blank or unreadable is `unstated`.
@Suite("Google Play: every fact states its buyer")
struct GoogleBuyerPropertyTests {
    /// What the answer holds for the account: absent, a JSON value.
    static let values: [String?] = [nil, "null", #""""#, #""   ""#, "42", #""u-1""#, #""U-1""#, #""acct 9""#]

    static func expected(_ value: String?) -> Buyer {
        guard let value, value.hasPrefix("\""), let text = try? JSONDecoder().decode(String.self, from: Data(value.utf8)) else {
            return .unstated
        }
        return .stated(text, store: .playStore)
    }

    @Test("property: a one-time product's obfuscatedExternalAccountId decides its buyer, exactly")
    func products() async {
        await propertyCheck(count: 200, input: Gen.int(in: 0...(Self.values.count - 1)), Gen.int(in: 0...2)) { pick, state in
            let value = Self.values[pick]
            let extra = value.map { #", "obfuscatedExternalAccountId": \#($0)"# } ?? ""
            let body = #"{"purchaseState": \#(state), "purchaseTimeMillis": "1780000000000", "orderId": "GPA.1"\#(extra)}"#
            guard let purchase = try? JSONDecoder().decode(ProductPurchase.self, from: Data(body.utf8)) else {
                Issue.record("the answer did not decode: \(body)")
                return
            }
            let fact = try? GooglePlayProductMapping.storeFact(purchase, productID: "pro.lifetime", token: "tok")
            #expect(fact?.purchase.buyer == Self.expected(value), "\(body)")
            #expect(fact?.purchase.buyer.account?.ignoresCase != true, "only Apple's token ignores case")
        }
    }

    @Test("property: a subscription's externalAccountIdentifiers decides the buyer of each of its line items")
    func subscriptions() async {
        await propertyCheck(count: 200, input: Gen.int(in: 0...(Self.values.count - 1))) { pick in
            let value = Self.values[pick]
            let extra = value.map { #", "externalAccountIdentifiers": {"obfuscatedExternalAccountId": \#($0)}"# } ?? ""
            let body = #"""
                {"subscriptionState": "SUBSCRIPTION_STATE_ACTIVE", "startTime": "2026-01-01T00:00:00Z",
                 "lineItems": [{"productId": "a", "expiryTime": "2026-02-01T00:00:00Z"},
                               {"productId": "b", "expiryTime": "2026-02-01T00:00:00Z"}]\#(extra)}
                """#
            guard let answer = try? GoogleJSON.subscription(Data(body.utf8)),
                let facts = try? GooglePlayMapping.storeFacts(answer, token: "tok")
            else {
                Issue.record("the answer did not map")
                return
            }
            #expect(facts.count == 2)
            #expect(facts.allSatisfy { $0.purchase.buyer == Self.expected(value) }, "\(value ?? "absent")")
        }
    }

    @Test("a void and a 410 name their purchase, not a buyer: unstated")
    func withoutBuyer() {
        #expect(GooglePlayMapping.expiredEvidence(token: "tok", productID: "a").purchase.buyer == .unstated)
    }
}
