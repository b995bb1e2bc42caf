import Foundation
import StoreSimulator
import SubreconApp
import SubreconCore
import SubreconJob
import SubreconPorts
import SubreconReports
import SubreconTestSupport
import SubreconTestWorld
import Testing

/// An iOS app whose backend verifies receipts itself: no RevenueCat, Apple alone (CONTRACT "Environment", "Sources and the decision").
@Suite("The job with Apple alone (no RevenueCat)", .serialized)
struct AppleOnlyJobTests {
    @Test(
        "users known by an original transaction id or a stored receipt are re-validated with Apple alone; an unknown id is unknown_at_source",
        arguments: JobWorld.backends)
    func appleAlone(_ backend: WorldBackend) async throws {
        try await JobWorld.with(backend, apple: true, receipts: true, revenueCat: false) { h in
            func seed(_ row: UserRow) async throws { try await h.db.insertUsers([row]) }
            // Apple knows a renewal the webhooks missed.
            try await seed(h.row("o-renewed", tier: 1, "active", end: -3, txn: "9001"))
            await h.appStore.setScenario(
                AppStoreScenario(
                    originalTransactionID: "9001", transactionID: "9101", productID: "premium_monthly", status: 1,
                    purchaseDate: JobWorld.day(-3), expiresDate: JobWorld.day(27), price: 9990, currency: "USD"))
            // Apple says expired.
            try await seed(h.row("o-expired", tier: 1, "active", end: -2, txn: "9002"))
            await h.appStore.setScenario(
                AppStoreScenario(
                    originalTransactionID: "9002", productID: "premium_monthly", status: 2, purchaseDate: JobWorld.day(-32),
                    expiresDate: JobWorld.day(-2)))
            // Apple knows the id in neither environment: absence, never a downgrade.
            try await seed(h.row("o-unknown", tier: 1, "active", end: -1, txn: "9003"))
            // Known only by a stored receipt.
            try await seed(h.row("o-receipt", tier: 1, "active", end: -3))
            try await h.db.saveReceipt("receipt-9004", for: "o-receipt")
            await h.receipts.setScenario(ReceiptJobTests.receipt("receipt-9004", id: "9004"))
            await h.appStore.setScenario(
                AppStoreScenario(
                    originalTransactionID: "9004", transactionID: "90041", productID: "premium_monthly", status: 1,
                    purchaseDate: JobWorld.day(-3), expiresDate: JobWorld.day(27)))
            // No identifier anywhere: nothing to ask, untouched.
            try await seed(h.row("o-none", tier: 1, "active", end: -1))
            // Apple fails: untouched, reported.
            try await seed(h.row("o-fault", tier: 1, "active", end: -1, txn: "9006"))
            await h.appStore.setFault(.error(status: 500, errorCode: nil, times: 100), for: "9006")

            let result = try await h.run { $0.maxDowngradeRatio = 1 }
            #expect(result.exitStatus == .userErrors)
            let rows = try h.report(result)

            let renewed = try #require(try await h.user("o-renewed"))
            #expect(renewed.currentTier == 1 && renewed.endDate == JobWorld.day(27))
            #expect(rows["o-renewed"]?.action == "extend" && rows["o-renewed"]?.sources == ["app_store"])

            let expired = try #require(try await h.user("o-expired"))
            #expect(expired.currentTier == 0 && expired.statusText == "expired")
            #expect(rows["o-expired"]?.action == "downgrade" && rows["o-expired"]?.pushIntent == ["expired"])

            let unknown = try #require(try await h.user("o-unknown"))
            #expect(unknown.currentTier == 1 && unknown.statusText == "active", "absence never downgrades")
            #expect(rows["o-unknown"]?.drift == ["unknown_at_source"] && rows["o-unknown"]?.applied == false)
            #expect(rows["o-unknown"]?.error?.contains("Apple does not know") == true)
            #expect(rows["o-unknown"]?.error?.contains("RevenueCat") == false, "RevenueCat was not asked")

            let receipt = try #require(try await h.user("o-receipt"))
            #expect(receipt.currentTier == 1 && receipt.endDate == JobWorld.day(27))
            #expect(receipt.originalTransactionID == "9004", "the id the receipt revealed is stored")
            #expect(rows["o-receipt"]?.sources == ["app_store_receipt", "app_store"])

            let none = try #require(try await h.user("o-none"))
            #expect(none.currentTier == 1 && none.statusText == "active")
            #expect(rows["o-none"]?.drift == ["unknown_at_source"] && rows["o-none"]?.sources == [])

            let fault = try #require(try await h.user("o-fault"))
            #expect(fault.currentTier == 1 && fault.statusText == "active")
            #expect(rows["o-fault"]?.drift == ["fetch_error"] && rows["o-fault"]?.sources == ["app_store"])

            #expect(await h.revenueCat.counters().totalRequests == 0, "RevenueCat is never called when it is not configured")
            let summary = try JSONDecoder().decode(
                RunSummary.self, from: Data(contentsOf: result.folder.appendingPathComponent("summary.json")))
            #expect(summary.sources["revenuecat"]?.contains("not configured") == true)
        }
    }

    @Test("run with no source configured exits 78 naming the variables, before anything is touched", arguments: JobWorld.backends)
    func noSource(_ backend: WorldBackend) async throws {
        try await JobWorld.with(backend, revenueCat: false) { h in
            try await h.db.insertUsers([h.row("n-1", tier: 1, "active", end: -1)])
            do {
                _ = try await h.run()
                Issue.record("a run without any source must fail")
            } catch let error as ConfigError {
                #expect(error.variable == "REVENUECAT_API_KEY")
                for name in ["STRIPE_API_KEY", "GOOGLE_PLAY_SERVICE_ACCOUNT", "APP_STORE_ISSUER_ID", "APPLE_SHARED_SECRET"] {
                    #expect(error.description.contains(name))
                }
            }
            #expect(try await h.db.count(.runs(nil)) == 0, "nothing was written")
        }
    }
}
