import Foundation
import StoreSimulator
import SubreconCore
import SubreconJob
import SubreconPorts
import SubreconReports
import SubreconTestSupport
import SubreconTestWorld
import Testing

/// (CONTRACT "Sources and the decision") Apple Non-Consumable purchases (transaction history) and Google Play one-time products
/// (`purchases.products.get`) are non-expiring purchases. Real PostgreSQL, the loopback simulators speaking the real
/// wire formats (Apple's signed with the test PKI), the job run through `Commands.run`.
@Suite("The job with Apple and Google Play one-time purchases", .serialized)
struct OneTimeStoresJobTests {
    static let product = "pro.lifetime"

    static func appleRow(_ id: String, tier: Int, _ status: String, txn: String) -> UserRow {
        UserRow(
            id: id, currentTier: tier, status: status, endDate: tier == 0 ? JobWorld.day(-10) : nil, source: "apple_iap",
            productID: product, originalTransactionID: txn, autoRenew: false)
    }

    static func lifetime(_ txn: String, revoked: Bool = false, environment: StoreEnvironment = .production) -> AppleNonConsumableScenario {
        AppleNonConsumableScenario(
            originalTransactionID: txn, productID: product, environment: environment, purchaseDate: JobWorld.day(-40),
            revocationDate: revoked ? JobWorld.day(-2) : nil, price: 49_990, currency: "USD")
    }

    @Test(
        "Apple: a paid Non-Consumable restores a free row to lifetime; revoked is refunded; sandbox ignored; a malformed page leaves the row",
        arguments: JobWorld.backends)
    func apple(_ backend: WorldBackend) async throws {
        try await JobWorld.with(backend, apple: true, revenueCat: false) { h in
            try await h.db.upsertProducts([.init(productID: Self.product, tier: 3)])
            let rows = [
                Self.appleRow("a-gets", tier: 0, "expired", txn: "5001"), Self.appleRow("a-keeps", tier: 3, "active", txn: "5002"),
                Self.appleRow("a-revoked", tier: 3, "active", txn: "5003"), Self.appleRow("a-sandbox", tier: 0, "expired", txn: "5004"),
                Self.appleRow("a-malformed", tier: 3, "active", txn: "5005"),
            ]
            try await h.db.insertUsers(rows)
            await h.appStore.addNonConsumable(Self.lifetime("5001"))
            await h.appStore.addNonConsumable(Self.lifetime("5002"))
            await h.appStore.addNonConsumable(Self.lifetime("5003", revoked: true))
            await h.appStore.addNonConsumable(Self.lifetime("5004", environment: .sandbox))
            await h.appStore.addNonConsumable(Self.lifetime("5005"))
            await h.appStore.setFault(
                .raw(status: 200, headers: [:], body: Data(#"{"hasMore":false,"signedTransactions":[1"#.utf8), times: 100),
                for: AppStoreSimulator.historyFaultKey("5005"))

            let result = try await h.run {
                $0.userIDs = rows.map(\.id)
                $0.mode = .backfill
                $0.maxDowngradeRatio = 1
            }
            let report = try h.report(result)

            let gets = try #require(try await h.user("a-gets"))
            #expect(gets.currentTier == 3 && gets.statusText == "active" && gets.endDate == nil, "restored to lifetime")
            #expect(report["a-gets"]?.action == "restore" && report["a-gets"]?.sources == ["app_store"])
            let keeps = try #require(try await h.user("a-keeps"))
            #expect(keeps.currentTier == 3 && keeps.statusText == "active" && keeps.endDate == nil && report["a-keeps"]?.error == nil)
            let revoked = try #require(try await h.user("a-revoked"))
            #expect(revoked.currentTier == 0 && revoked.statusText == "refunded", "a revoked lifetime purchase never entitles")
            let sandbox = try #require(try await h.user("a-sandbox"))
            #expect(sandbox.currentTier == 0 && report["a-sandbox"]?.drift.contains("sandbox_ignored") == true)
            let malformed = try #require(try await h.user("a-malformed"))
            #expect(malformed.currentTier == 3 && malformed.statusText == "active", "a malformed page changes nothing")
            #expect(report["a-malformed"]?.action == "skipped" && report["a-malformed"]?.drift.contains("fetch_error") == true)
        }
    }

    static func googleRow(_ id: String, tier: Int, _ status: String) -> UserRow {
        UserRow(
            id: id, currentTier: tier, status: status, endDate: tier == 0 ? JobWorld.day(-10) : nil, source: "google_iap",
            productID: product, autoRenew: false, identifiers: [.googlePlay: "tok-" + id])
    }

    @Test(
        "Google: a purchased one-time product restores to lifetime; canceled is refunded; a test purchase is ignored; malformed leaves the row",
        arguments: JobWorld.backends)
    func google(_ backend: WorldBackend) async throws {
        let account = try GoogleTestServiceAccount.generate(tokenURI: "{base}/token")
        let google = GooglePlaySimulator(account: account, packageName: GoogleWorld.package)
        try await JobWorld.with(backend, revenueCat: false, routes: [google], extra: GoogleWorld.environment(account)) { h in
            try await h.db.upsertProducts([.init(productID: Self.product, tier: 3)])
            let rows = [
                Self.googleRow("g-gets", tier: 0, "expired"), Self.googleRow("g-keeps", tier: 3, "active"),
                Self.googleRow("g-canceled", tier: 3, "active"), Self.googleRow("g-test", tier: 0, "expired"),
                Self.googleRow("g-pending", tier: 0, "expired"), Self.googleRow("g-malformed", tier: 3, "active"),
            ]
            try await h.db.insertUsers(rows)
            let cases: [(String, Int, Int?)] = [
                ("g-gets", 0, nil), ("g-keeps", 0, nil), ("g-canceled", 1, nil), ("g-test", 0, 0), ("g-pending", 2, nil),
                ("g-malformed", 0, nil),
            ]
            for (id, state, type) in cases {
                await google.setProduct(
                    SimulatedPlayProduct(
                        productID: Self.product, purchaseState: state, purchaseTime: JobWorld.day(-40), orderID: "GPA.\(id)",
                        purchaseType: type), token: "tok-" + id)
            }
            await google.setFault(
                .raw(status: 200, headers: [:], body: Data(#"{"purchaseState":0,"purchaseTimeMillis":"17x"}"#.utf8)),
                token: GooglePlaySimulator.productKey(product: Self.product, token: "tok-g-malformed"))

            let result = try await h.run {
                $0.userIDs = rows.map(\.id)
                $0.mode = .backfill
                $0.maxDowngradeRatio = 1
            }
            let report = try h.report(result)

            let gets = try #require(try await h.user("g-gets"))
            #expect(gets.currentTier == 3 && gets.statusText == "active" && gets.endDate == nil, "restored to lifetime")
            #expect(report["g-gets"]?.action == "restore")
            let keeps = try #require(try await h.user("g-keeps"))
            #expect(keeps.currentTier == 3 && keeps.endDate == nil && report["g-keeps"]?.error == nil)
            let canceled = try #require(try await h.user("g-canceled"))
            #expect(canceled.currentTier == 0 && canceled.statusText == "refunded", "a canceled one-time purchase never entitles")
            let test = try #require(try await h.user("g-test"))
            #expect(test.currentTier == 0 && report["g-test"]?.drift.contains("sandbox_ignored") == true)
            let pending = try #require(try await h.user("g-pending"))
            #expect(pending.currentTier == 0, "a pending purchase never entitles")
            let malformed = try #require(try await h.user("g-malformed"))
            #expect(malformed.currentTier == 3 && malformed.statusText == "active", "a malformed answer changes nothing")
            #expect(report["g-malformed"]?.action == "skipped" && report["g-malformed"]?.drift.contains("fetch_error") == true)
        }
    }
}
