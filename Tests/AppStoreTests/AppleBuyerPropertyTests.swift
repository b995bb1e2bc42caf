import Foundation
import PropertyBased
import SubreconCore
import Testing

@testable import AppStore

/// Every fact Apple's signed transactions map to states its buyer (CONTRACT "Whose purchase it is"): a well-formed
/// `appAccountToken` UUID, lower-cased and compared without case, subscriptions and non-consumables alike; anything
/// else is `unstated`.
@Suite("App Store: every fact states its buyer")
struct AppleBuyerPropertyTests {
    static let tokens: [String?] = [
        nil, "null", #""""#, #""user-42""#, #""7e3fb20b-4cdb-47cc-936d-99d65f608138""#, #""7E3FB20B-4CDB-47CC-936D-99D65F608138""#,
    ]

    static func payload(type: String, token: String?) throws -> JWSTransactionDecodedPayload {
        let extra = token.map { #", "appAccountToken": \#($0)"# } ?? ""
        let body = #"""
            {"originalTransactionId": "1", "transactionId": "2", "productId": "pro", "type": "\#(type)",
             "purchaseDate": 1780000000000, "environment": "Production"\#(extra)}
            """#
        return try AppStoreJSON.decode(JWSTransactionDecodedPayload.self, from: Data(body.utf8))
    }

    @Test("property: subscriptions and non-consumables state the token's UUID, lower-cased, or unstated")
    func everyKind() async {
        await propertyCheck(count: 200, input: Gen.int(in: 0...(Self.tokens.count - 1)), Gen.bool) { pick, lifetime in
            let token = Self.tokens[pick]
            guard let transaction = try? Self.payload(type: lifetime ? "Non-Consumable" : "Auto-Renewable Subscription", token: token)
            else {
                Issue.record("the payload did not decode")
                return
            }
            let buyer: Buyer?
            if lifetime {
                buyer = try? AppleNonConsumableMapping.storeFacts([(transaction, nil)], lookup: "1").get().first?.purchase.buyer
            } else {
                buyer = try? AppleSubscriptionMapping.purchaseFact(status: 1, transaction: transaction, renewal: nil).buyer
            }
            let isUUID = pick >= 4
            let expected: Buyer =
                isUUID ? .account(BuyerAccount(stated: "7e3fb20b-4cdb-47cc-936d-99d65f608138", ignoresCase: true)) : .unstated
            #expect(buyer == expected, "\(token ?? "absent"), lifetime \(lifetime)")
        }
    }
}
