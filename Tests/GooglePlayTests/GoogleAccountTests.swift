import Foundation
import PropertyBased
import StoreSimulator
import SubreconCore
import Testing

@testable import GooglePlay

/// `externalAccountIdentifiers.obfuscatedExternalAccountId` (CONTRACT "Whose purchase it is"): the buyer's account, strictly a string of
/// 1...64 characters; anything else not stated, never a failure of the answer.
@Suite("Google Play: obfuscatedExternalAccountId, strictly")
struct GoogleAccountTests {
    static func answer(_ identifiers: String?) throws -> SubscriptionPurchaseV2 {
        let extra = identifiers.map { #", "externalAccountIdentifiers": \#($0)"# } ?? ""
        let body = #"""
            {"kind": "androidpublisher#subscriptionPurchaseV2", "subscriptionState": "SUBSCRIPTION_STATE_ACTIVE",
             "startTime": "2026-01-01T00:00:00Z", "lineItems": [{"productId": "premium_monthly",
             "expiryTime": "2026-02-01T00:00:00Z", "autoRenewingPlan": {"autoRenewEnabled": true}}]\#(extra)}
            """#
        return try GoogleJSON.subscription(Data(body.utf8))
    }

    @Test("a string of 1...64 characters is the account, kept as sent, and reaches the purchase")
    func stated() throws {
        let sixtyFour = String(repeating: "a", count: 64)
        for id in ["u-1", "User 1", sixtyFour] {
            let answer = try Self.answer(#"{"obfuscatedExternalAccountId": "\#(id)", "obfuscatedExternalProfileId": "p"}"#)
            #expect(answer.externalAccountIdentifiers?.obfuscatedExternalAccountId == id)
            let facts = try GooglePlayMapping.storeFacts(answer, token: "tok")
            #expect(facts.map(\.purchase.accountToken) == [id])
        }
    }

    @Test("65 characters, empty, a number, an object, null, or identifiers that are not an object: not stated, still read")
    func hostile() throws {
        let values: [String?] = [
            #"{"obfuscatedExternalAccountId": "\#(String(repeating: "a", count: 65))"}"#,
            #"{"obfuscatedExternalAccountId": ""}"#, #"{"obfuscatedExternalAccountId": 12345}"#,
            #"{"obfuscatedExternalAccountId": {"id": "u"}}"#, #"{"obfuscatedExternalAccountId": null}"#,
            #"{"obfuscatedExternalAccountId": ["u"]}"#, #"{"obfuscatedExternalProfileId": "u"}"#, #""u-1""#, "[]", "7",
            "null", nil,
        ]
        for value in values {
            let answer = try Self.answer(value)
            let facts = try GooglePlayMapping.storeFacts(answer, token: "tok")
            #expect(facts.count == 1, "\(value ?? "absent")")
            #expect(facts.first?.purchase.accountToken == nil, "\(value ?? "absent")")
        }
    }

    @Test("property: a string id is the account exactly when it has 1...64 characters")
    func lengths() async {
        await propertyCheck(count: 300, input: Gen.element(of: Array("abc-_9 é")).array(of: 0...90)) { picked in
            let id = String(picked.compactMap { $0 })
            let answer = try? Self.answer(#"{"obfuscatedExternalAccountId": "\#(id)"}"#)
            let expected: String? = (1...64).contains(id.count) ? id : nil
            #expect(answer?.externalAccountIdentifiers?.obfuscatedExternalAccountId == expected)
        }
    }

    @Test("over loopback: the simulator's account id reaches the purchase; none when it sends none")
    func loopback() async throws {
        try await PlayLoopback.run { loop in
            var owned = SimulatedPlaySubscription.single(
                "SUBSCRIPTION_STATE_ACTIVE", product: "premium_monthly", start: day(-3), expiry: day(27))
            owned.obfuscatedAccountID = "acct-owner"
            await loop.simulator.setPurchase(owned, token: "tok-owned")
            await loop.simulator.setPurchase(
                .single("SUBSCRIPTION_STATE_ACTIVE", product: "premium_monthly", start: day(-3), expiry: day(27)), token: "tok-plain")
            let stated = try await loop.client.storeFacts(token: "tok-owned", productHint: nil).get()
            #expect(stated.map(\.purchase.accountToken) == ["acct-owner"])
            let plain = try await loop.client.storeFacts(token: "tok-plain", productHint: nil).get()
            #expect(plain.map(\.purchase.accountToken) == [nil])
        }
    }
}
