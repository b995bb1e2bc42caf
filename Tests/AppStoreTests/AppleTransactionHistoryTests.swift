import Foundation
import PropertyBased
import StoreSimulator
import SubreconCore
import Testing

@testable import AppStore

/// (CONTRACT "Sources and the decision", "Hostile answers and bounded work") Apple's non-consumables come from `GET /inApps/v2/history/{id}?productType=NON_CONSUMABLE`,
/// every page verified like the subscription path's payloads; a cut-off or malformed page is an error, never an
/// empty history.
@Suite("Apple transaction history: non-consumables, paging, hostile pages", .serialized)
struct AppleTransactionHistoryTests {
    static let day: TimeInterval = 86_400

    static func lifetime(_ id: String, revoked: Bool = false, environment: StoreEnvironment = .production, customer: [String] = [])
        -> AppleNonConsumableScenario
    {
        AppleNonConsumableScenario(
            originalTransactionID: id, productID: "pro.lifetime", environment: environment,
            purchaseDate: Date().addingTimeInterval(-30 * day), revocationDate: revoked ? Date().addingTimeInterval(-day) : nil,
            price: 49_990, currency: "USD", customerTransactionIDs: customer)
    }

    @Test("a verified Non-Consumable is a non-expiring fact with its line, price and environment; a revoked one is refunded")
    func facts() async throws {
        let h = try await AppStoreHarness(scenarios: [])
        await h.simulator.addNonConsumable(Self.lifetime("7001"))
        await h.simulator.addNonConsumable(Self.lifetime("7002", revoked: true))
        await h.simulator.addNonConsumable(Self.lifetime("7003", environment: .sandbox))
        let bought = try await h.client.nonConsumableFacts(transactionID: "7001").get()
        let revoked = try await h.client.nonConsumableFacts(transactionID: "7002").get()
        let sandbox = try await h.client.nonConsumableFacts(transactionID: "7003").get()
        let unknown = try await h.client.nonConsumableFacts(transactionID: "7999").get()
        await h.stop()
        let fact = try #require(bought.first?.purchase)
        #expect(bought.count == 1 && fact.kind == .nonExpiring && fact.isSandbox == false && fact.expiresDate == nil)
        #expect(fact.originalTransactionID == "7001" && fact.line?.keys.contains("7001") == true)
        #expect(fact.price == Money(amount: Decimal(string: "49.99")!, currency: "USD") && bought.first?.signedBy != nil)
        let refunded = try #require(revoked.first?.purchase)
        #expect(refunded.refundedAt != nil && refunded.storeState == nil, "a revocation is its date: the core judges it at T")
        #expect(sandbox.first?.purchase.isSandbox == true, "asked in sandbox after production's 4040010")
        #expect(unknown.isEmpty, "an id Apple does not know is absence")
    }

    @Test("pages of 20 are followed by revision; the purchases of every page are read")
    func paging() async throws {
        let h = try await AppStoreHarness(scenarios: [])
        for index in 0..<45 { await h.simulator.addNonConsumable(Self.lifetime("p-\(index)", customer: ["cust"])) }
        let facts = try await h.client.nonConsumableFacts(transactionID: "cust").get()
        let requests = await h.simulator.historyRequests(for: "cust")
        await h.stop()
        #expect(facts.count == 45 && requests == 3, "\(facts.count) facts in \(requests) requests")
    }

    @Test(
        "a malformed page, a page without hasMore, a repeated revision, another app's page, a forged transaction: an error",
        arguments: [
            #"{"hasMore":false,"signedTransactions":"#, #"{"revision":"r","signedTransactions":[]}"#,
            #"{"hasMore":true,"revision":"r","signedTransactions":[]}"#, #"{"hasMore":false}"#,
            #"{"hasMore":false,"bundleId":"com.other","signedTransactions":[]}"#,
            #"{"hasMore":false,"signedTransactions":["not.a.jws"]}"#, #"{"hasMore":"no","signedTransactions":[]}"#,
            #"{"hasMore":false,"environment":"Mars","signedTransactions":[]}"#,
        ])
    func hostile(body: String) async throws {
        let h = try await AppStoreHarness(scenarios: [], split: false)
        await h.simulator.addNonConsumable(Self.lifetime("8001"))
        await h.simulator.setFault(
            .raw(status: 200, headers: [:], body: Data(body.utf8), times: 100), for: AppStoreSimulator.historyFaultKey("8001"))
        let result = await h.client.nonConsumableFacts(transactionID: "8001")
        let requests = await h.simulator.historyRequests(for: "8001")
        await h.stop()
        #expect((try? result.get()) == nil, "\(body) was believed")
        #expect(requests <= 2, "a repeated revision ends the list at once: \(requests)")
    }

    @Test("only Non-Consumable transactions become facts; one sent twice counts once, as its last version")
    func mappingTable() throws {
        func transaction(_ type: String?, id: String, revoked: Bool = false) -> (payload: JWSTransactionDecodedPayload, signer: String?) {
            var payload = JWSTransactionDecodedPayload(
                originalTransactionId: id, transactionId: id, bundleId: "b", productId: "pro.lifetime",
                purchaseDate: Date(timeIntervalSince1970: 1_700_000_000), expiresDate: nil, type: type,
                signedDate: Date(timeIntervalSince1970: 1_700_000_100), environment: "Production")
            payload.revocationDate = revoked ? Date(timeIntervalSince1970: 1_700_000_050) : nil
            return (payload, nil)
        }
        let facts = try AppleNonConsumableMapping.storeFacts(
            [
                transaction("Non-Consumable", id: "1"), transaction("Consumable", id: "2"),
                transaction("Auto-Renewable Subscription", id: "3"),
                transaction(nil, id: "4"), transaction("Non-Renewing Subscription", id: "5"),
                transaction("Non-Consumable", id: "1", revoked: true),
            ], lookup: "1"
        ).get()
        #expect(facts.count == 1 && facts[0].purchase.refundedAt != nil && facts[0].purchase.storeState == nil)
        var missing = transaction("Non-Consumable", id: "9")
        missing.payload.productId = nil
        #expect((try? AppleNonConsumableMapping.storeFacts([missing], lookup: "9").get()) == nil)
    }

    @Test("the continuation rule over arbitrary pages: complete only when hasMore is false and the page is whole")
    func continuationProperty() async {
        await propertyCheck(
            count: 500, input: Gen.element(of: [nil, true, false]), Gen.element(of: [nil, "", "r1", "r2"]), Gen.bool, Gen.bool
        ) { more, text, listed, seenBefore in
            let hasMore: Bool? = more ?? nil
            let revision: String? = text ?? nil
            let page = HistoryResponse(revision: revision, hasMore: hasMore, bundleId: "b", signedTransactions: listed ? [] : nil)
            var seen: Set<String> = seenBefore ? ["r1"] : []
            let next = page.next(bundleID: "b", seen: &seen)
            switch next {
            case .success(nil): #expect(hasMore == false && listed)
            case .success(let token?): #expect(hasMore == true && listed && token == revision && !(seenBefore && token == "r1"))
            case .failure(let error): #expect(error.message.contains("incomplete"))
            }
        }
    }

    @Test("the page decoder never traps on arbitrary bytes and keeps no NUL in text")
    func decoderProperty() async {
        await propertyCheck(count: 1_000, input: Gen.uint8().array(of: 0...64)) { bytes in
            let body = Data(#"{"hasMore":false,"revision":""#.utf8) + Data(bytes) + Data(#"","signedTransactions":[]}"#.utf8)
            if let page = try? HistoryResponse.decode(body: body) {
                #expect(page.revision?.unicodeScalars.contains("\u{0}") != true)
            }
        }
    }
}
