import Foundation
import StoreSimulator
import SubreconCore
import SubreconJob
import SubreconPorts
import SubreconReports
import SubreconTestSupport
import SubreconTestWorld
import Testing

@Suite("The job with the legacy receipt bridge", .serialized)
struct ReceiptJobTests {
    /// A receipt whose latest renewal runs until day 27 (original transaction `id`).
    static func receipt(_ data: String, id: String, environment: StoreEnvironment = .production) -> AppleReceiptScenario {
        AppleReceiptScenario(
            receiptData: data, environment: environment,
            transactions: [
                .init(
                    originalTransactionID: id, transactionID: id, productID: "premium_monthly", purchaseDate: JobWorld.day(-33),
                    expiresDate: JobWorld.day(-3)),
                .init(
                    originalTransactionID: id, transactionID: id + "1", productID: "premium_monthly",
                    purchaseDate: JobWorld.day(-3), expiresDate: JobWorld.day(27)),
            ],
            renewals: [.init(originalTransactionID: id, productID: "premium_monthly")])
    }

    @Test(
        "a user known only by a stored receipt is re-validated through Apple and their original transaction id is stored",
        arguments: JobWorld.backends)
    func receiptThenAppStore(_ backend: WorldBackend) async throws {
        try await JobWorld.with(backend, apple: true, receipts: true) { h in
            // Neither the row nor RevenueCat has a transaction id; only the stored receipt knows it.
            try await h.seed(h.row("r-legacy", tier: 1, "active", end: -3), JobWorld.subscription(expires: -3))
            try await h.db.saveReceipt("receipt-legacy", for: "r-legacy")
            await h.receipts.setScenario(Self.receipt("receipt-legacy", id: "8001"))
            await h.appStore.setScenario(
                AppStoreScenario(
                    originalTransactionID: "8001", transactionID: "80011", productID: "premium_monthly", status: 1,
                    purchaseDate: JobWorld.day(-3), expiresDate: JobWorld.day(27), price: 9990, currency: "USD"))
            // No receipt stored: no verifyReceipt call, RevenueCat alone.
            try await h.seed(h.row("r-none", tier: 1, "active", end: -2), JobWorld.subscription(expires: -2))
            // verifyReceipt answers a status that is not an answer: fetch_error, untouched.
            try await h.seed(h.row("r-broken", tier: 1, "active", end: -2), JobWorld.subscription(expires: -2))
            try await h.db.saveReceipt("receipt-broken", for: "r-broken")
            await h.receipts.setScenario(Self.receipt("receipt-broken", id: "8003"))
            await h.receipts.setFault(.status(21010, times: 10), for: "receipt-broken")

            let result = try await h.run { $0.maxDowngradeRatio = 1 }
            #expect(result.exitStatus == .userErrors)
            let rows = try h.report(result)

            let legacy = try #require(try await h.user("r-legacy"))
            #expect(legacy.originalTransactionID == "8001", "the id the receipt revealed is stored")
            #expect(legacy.currentTier == 1 && legacy.endDate == JobWorld.day(27) && legacy.statusText == "active")
            #expect(rows["r-legacy"]?.drift == ["missed_renewal", "source_conflict"], "Apple's view replaced RevenueCat's")

            #expect(rows["r-none"]?.action == "downgrade")
            let broken = try #require(try await h.user("r-broken"))
            #expect(broken.currentTier == 1 && broken.originalTransactionID == nil)
            #expect(rows["r-broken"]?.drift == ["fetch_error"] && rows["r-broken"]?.applied == false)
            #expect(rows["r-broken"]?.error?.contains("21010") == true)
            #expect(rows["r-broken"]?.error?.contains(JobWorld.sharedSecret) == false)

            #expect(result.summary.requests["app_store_receipt"]?.requests == 2, "one verifyReceipt per stored receipt")
            #expect(await h.appStore.totalRequests() == 1, "the revealed id is looked up once")
            #expect(result.summary.requests["app_store"]?.requests == 1 + 13, "plus the notification history's 13 queries")
        }
    }

    @Test(
        "without the App Store Server API the receipt's facts stand in for Apple's; a stored id skips the bridge",
        arguments: JobWorld.backends)
    func receiptAlone(_ backend: WorldBackend) async throws {
        try await JobWorld.with(backend, receipts: true) { h in
            try await h.seed(h.row("r-only", tier: 1, "active", end: -3), JobWorld.subscription(expires: -3))
            try await h.db.saveReceipt("receipt-only", for: "r-only")
            await h.receipts.setScenario(Self.receipt("receipt-only", id: "8101"))

            let first = try await h.run()
            #expect(first.exitStatus == .ok)
            let row = try #require(try await h.user("r-only"))
            #expect(row.originalTransactionID == "8101" && row.endDate == JobWorld.day(27) && row.currentTier == 1)
            #expect(try h.report(first)["r-only"]?.action == "extend")
            #expect(first.summary.requests["app_store_receipt"]?.requests == 1)
            #expect(first.summary.requests["app_store"] == nil)

            // The stored id now leads straight past the bridge: no second verifyReceipt call.
            let second = try await h.run {
                $0.mode = .backfill
                $0.dryRun = true
            }
            #expect(second.summary.requests["app_store_receipt"] == nil)
        }
    }
}
