import Foundation
import PropertyBased
import StoreSimulator
import SubreconCore
import Testing

@testable import AppStore

/// `appAccountToken` in the verified signed transaction (CONTRACT "Whose purchase it is"): only a well-formed UUID is an account, kept as
/// signed; anything else is not stated, and the payload is still read.
@Suite("App Store: appAccountToken, strictly", .serialized)
struct AppAccountTokenTests {
    static func payload(_ token: String) throws -> JWSTransactionDecodedPayload {
        let body =
            #"{"originalTransactionId": "1", "productId": "pro.monthly", "expiresDate": 1782592000000, "appAccountToken": \#(token)}"#
        return try AppStoreJSON.decode(JWSTransactionDecodedPayload.self, from: Data(body.utf8))
    }

    @Test("a UUID in either case is the account, kept exactly as signed, and reaches the purchase")
    func uuid() throws {
        for token in ["7e3fb20b-4cdb-47cc-936d-99d65f608138", "7E3FB20B-4CDB-47CC-936D-99D65F608138"] {
            let transaction = try Self.payload("\"\(token)\"")
            #expect(transaction.appAccountToken?.uuid == token)
            let fact = try AppleSubscriptionMapping.purchaseFact(status: 1, transaction: transaction, renewal: nil)
            #expect(fact.accountToken == token.lowercased(), "normalised once where it is read: compared without case")
            #expect(fact.buyer.account?.ignoresCase == true)
        }
    }

    @Test("a non-UUID string, a number, an object, null or a braced UUID is not stated; the payload is still read")
    func hostile() throws {
        let values = [
            #""user-42""#, #""7e3fb20b4cdb47cc936d99d65f608138""#, #""{7e3fb20b-4cdb-47cc-936d-99d65f608138}""#,
            #""7e3fb20b-4cdb-47cc-936d-99d65f60813g""#, #"" 7e3fb20b-4cdb-47cc-936d-99d65f608138""#,
            #""7e3fb20b-4cdb-47cc-936d-99d65f6081380""#, #""""#, "42", "true", #"{"uuid": "x"}"#, "null", "[]",
        ]
        for value in values {
            let transaction = try Self.payload(value)
            #expect(transaction.originalTransactionId == "1", "\(value)")
            #expect(transaction.appAccountToken?.uuid == nil, "\(value)")
            let fact = try AppleSubscriptionMapping.purchaseFact(status: nil, transaction: transaction, renewal: nil)
            #expect(fact.accountToken == nil, "\(value)")
        }
    }

    @Test("property: a 36-character text is an account exactly when it is hex digits with dashes at 8, 13, 18, 23")
    func shapes() async {
        let alphabet = Array("0123456789abcdefABCDEF-g ")
        await propertyCheck(count: 1_000, input: Gen.element(of: alphabet).array(of: 36...36), Gen.bool) { picked, dashed in
            var characters = picked.compactMap { $0 }
            if dashed { for index in [8, 13, 18, 23] { characters[index] = "-" } }
            let text = String(characters)
            let wellFormed = characters.enumerated().allSatisfy { index, character in
                [8, 13, 18, 23].contains(index) ? character == "-" : character.isHexDigit
            }
            #expect(AppAccountToken(text).uuid == (wellFormed ? text : nil), "\(text)")
            // Stricter than Foundation's parser (which lets a space through on Linux), never looser.
            if wellFormed { #expect(UUID(uuidString: text) != nil, "\(text)") }
        }
    }

    @Test("over loopback: the signed transaction's token reaches a lookup's purchase and the history's stated purchases")
    func loopback() async throws {
        var scenario = AppStoreClientEndToEndTests.scenario("301", status: 1, expiresIn: 10 * 86_400)
        scenario.appAccountToken = "7e3fb20b-4cdb-47cc-936d-99d65f608138"
        var plain = AppStoreClientEndToEndTests.scenario("302", status: 1, expiresIn: 10 * 86_400)
        plain.appAccountToken = "not-a-uuid"
        let h = try await AppStoreHarness(scenarios: [scenario, plain], split: false)
        let sent = Date().addingTimeInterval(-3_600)
        var first = AppleHistoryNotification(type: "SUBSCRIBED", originalTransactionID: "401", sentAt: sent.addingTimeInterval(-60))
        first.appAccountToken = "00000000-0000-0000-0000-000000000001"
        var later = AppleHistoryNotification(type: "DID_RENEW", originalTransactionID: "401", sentAt: sent)
        later.appAccountToken = "00000000-0000-0000-0000-000000000002"
        await h.history.add(first)
        await h.history.add(later)
        await h.history.add(AppleHistoryNotification(type: "SUBSCRIBED", originalTransactionID: "402", sentAt: sent))
        let owned = await h.client.subscriptionFacts(transactionID: "301")
        let unowned = await h.client.subscriptionFacts(transactionID: "302")
        let feed = await h.client.notificationHistory(since: sent.addingTimeInterval(-86_400), until: Date())
        await h.stop()
        #expect(try owned.get().map(\.purchase.accountToken) == ["7e3fb20b-4cdb-47cc-936d-99d65f608138"])
        #expect(try unowned.get().map(\.purchase.accountToken) == [nil])
        let stated = try feed.get().statedPurchases
        #expect(stated.map(\.key) == ["401", "402"] || stated.map(\.key) == ["402", "401"])
        let byKey = Dictionary(uniqueKeysWithValues: stated.map { ($0.key, $0.purchase) })
        #expect(byKey["401"]?.accountToken == "00000000-0000-0000-0000-000000000002", "the transaction signed last")
        #expect(byKey["402"]?.accountToken == nil)
        #expect(byKey["401"]?.originalTransactionID == "401")
    }
}
