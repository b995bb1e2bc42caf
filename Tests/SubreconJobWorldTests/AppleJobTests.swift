import Foundation
import StoreSimulator
import SubreconCore
import SubreconJob
import SubreconPorts
import SubreconReports
import SubreconTestSupport
import SubreconTestWorld
import Testing

@Suite("The job with Apple as second source", .serialized)
struct AppleJobTests {
    @Test("Apple overrides RevenueCat both ways, and a forged payload leaves the user untouched", arguments: JobWorld.backends)
    func appleOverrides(_ backend: WorldBackend) async throws {
        try await JobWorld.with(backend, apple: true) { h in
            // RevenueCat lags behind a renewal Apple knows about.
            try await h.seed(h.row("a-renewed", tier: 1, "active", end: -3, txn: "7001"), JobWorld.subscription(expires: -3, txn: "7001"))
            await h.appStore.setScenario(
                AppStoreScenario(
                    originalTransactionID: "7001", transactionID: "7101", productID: "premium_monthly", status: 1,
                    purchaseDate: JobWorld.day(-3), expiresDate: JobWorld.day(27), price: 9990, currency: "USD"))
            // RevenueCat still grants what Apple revoked; the row has no original transaction id, RevenueCat's id is used.
            try await h.seed(
                h.row("a-revoked", tier: 1, "active", end: -1), JobWorld.subscription(purchased: -1, expires: 29, txn: "7002"))
            await h.appStore.setScenario(
                AppStoreScenario(
                    originalTransactionID: "7002", productID: "premium_monthly", status: 5, purchaseDate: JobWorld.day(-1),
                    expiresDate: JobWorld.day(29), revocationDate: JobWorld.day(-0.5), revocationReason: 0, price: 9990, currency: "USD"))
            // A payload signed by an untrusted chain.
            try await h.seed(h.row("a-forged", tier: 1, "active", end: -2, txn: "7003"), JobWorld.subscription(expires: -2, txn: "7003"))
            await h.appStore.setScenario(
                AppStoreScenario(
                    originalTransactionID: "7003", productID: "premium_monthly", status: 2, purchaseDate: JobWorld.day(-32),
                    expiresDate: JobWorld.day(-2)))
            await h.appStore.setFault(.forgedSignature, for: "7003")
            // A Stripe user is never sent to Apple.
            try await h.db.insertUsers([
                UserRow(
                    id: "a-stripe", currentTier: 1, status: "active", endDate: JobWorld.day(-1), source: "stripe",
                    productID: "premium_monthly")
            ])
            await h.revenueCat.setSubscriber(
                SimulatedSubscriber(subscriptions: [
                    SimulatedSubscription(
                        productID: "premium_monthly", store: "stripe", purchaseDate: JobWorld.day(-1), expiresDate: JobWorld.day(29))
                ]), for: "a-stripe")

            let result = try await h.run { $0.maxDowngradeRatio = 1 }
            #expect(result.exitStatus == .userErrors)
            let rows = try h.report(result)

            let renewed = try #require(try await h.user("a-renewed"))
            #expect(renewed.currentTier == 1 && renewed.endDate == JobWorld.day(27))
            #expect(rows["a-renewed"]?.drift == ["missed_renewal", "source_conflict"])
            #expect(rows["a-renewed"]?.conflicts.first?.revenueCat.entitled == false)
            #expect(rows["a-renewed"]?.conflicts.first?.storeView.entitled == true)
            #expect(rows["a-renewed"]?.conflicts.first?.store == .appStore)

            let revoked = try #require(try await h.user("a-revoked"))
            #expect(revoked.currentTier == 0 && revoked.statusText == "refunded")
            #expect(revoked.originalTransactionID == "7002", "the original transaction id Apple revealed is stored")
            #expect(rows["a-revoked"]?.drift == ["missed_refund", "source_conflict"])

            let forged = try #require(try await h.user("a-forged"))
            #expect(forged.currentTier == 1 && forged.statusText == "active")
            #expect(rows["a-forged"]?.drift == ["verification_failed"] && rows["a-forged"]?.applied == false)

            #expect(rows["a-stripe"]?.action == "extend")
            #expect(await h.appStore.totalRequests() == 3, "one Apple call per App Store candidate")
            #expect(
                result.summary.requests["app_store"]?.requests == 3 + 13,
                "plus the notification history: undelivered + 12 entitlement and line-starting types, one page each")
            #expect(result.summary.requests["revenuecat"]?.requests == 4)
            #expect(await h.appStore.lastToken() != nil)
            let json = try String(contentsOf: result.folder.appendingPathComponent("drift.json"), encoding: .utf8)
            #expect(json.contains("\"app_store\"") && json.contains("\"revenuecat\""), "both views in drift.json")
        }
    }
}
