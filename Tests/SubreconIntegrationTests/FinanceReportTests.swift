import Foundation
import Logging
import StoreSimulator
import SubreconCommand
import SubreconCore
import SubreconDatabase
import SubreconPorts
import SubreconReports
import SubreconTestKit
import SubreconTestSupport
import Testing

@testable import SubreconApp
@testable import SubreconJob

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// Real PostgreSQL, real loopback HTTP to the RevenueCat simulator, the production `Commands.run` path.
@Suite(
    "Finance figures, derived reports and metrics from a real run", .serialized,
    .enabled(if: TestDatabase.isEnabled, TestDatabase.skipMessage))
struct FinanceReportTests {
    static let products: [ProductCatalog.Entry] = [
        .init(productID: "premium_monthly", tier: 1, entitlement: "premium"),
        .init(productID: "premium_annual", tier: 1, entitlement: "premium"),
        .init(productID: "pro_monthly", tier: 2, entitlement: "pro"),
    ]

    /// Seeds users with known source prices, runs the job, and returns the run and the simulator server.
    static func seededRun(
        databaseURL: String, db: SubscriptionDatabase, reports: URL, routes: [any SimulatorRoute] = []
    ) async throws -> (RunResult, SimulatorServer) {
        let asOf = Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down))
        func d(_ days: Double) -> Date { asOf.addingTimeInterval(days * 86_400) }
        let apiKey = "sk_test_ops"
        let revenueCat = RevenueCatSimulator(
            apiKey: apiKey,
            productEntitlements: [
                "premium_monthly": "premium", "premium_annual": "premium", "pro_monthly": "pro", "mystery_sku": "premium",
            ])
        let server = try await SimulatorServer.start(routes: [revenueCat] + routes)
        let env = ProcessEnvironment(["DATABASE_URL": databaseURL, "REVENUECAT_API_KEY": apiKey, "REVENUECAT_BASE_URL": server.baseURL])
        let logger = Logger(label: "subrecon.ops.tests")
        _ = try await Commands.migrate(environment: env, logger: logger)
        try await db.catalog.upsertProducts(products)

        func row(_ id: String, tier: Int, _ status: String, end: Double, product: String = "premium_monthly", source: String = "apple_iap")
            -> UserRow
        {
            UserRow(
                id: id, currentTier: tier, status: status, endDate: d(end), graceEndsAt: nil, source: source, productID: product,
                originalTransactionID: nil, autoRenew: true)
        }
        func price(_ amount: String, _ currency: String) -> SimulatedPrice {
            SimulatedPrice(amount: Decimal(string: amount)!, currency: currency)
        }
        let users: [(UserRow, SimulatedSubscription)] = [
            (
                row("u1-refund-usd", tier: 2, "active", end: -1, product: "pro_monthly"),
                SimulatedSubscription(
                    productID: "pro_monthly", purchaseDate: d(-1), expiresDate: d(29), refundedAt: d(-0.5), price: price("19.99", "USD"))
            ),
            (
                row("u2-billing-eur", tier: 1, "active", end: -1),
                SimulatedSubscription(
                    productID: "premium_monthly", purchaseDate: d(-31), expiresDate: d(-1), gracePeriodExpiresDate: d(15),
                    billingIssuesDetectedAt: d(-1), price: price("4.49", "EUR"))
            ),
            (
                row("u3-billing-play-usd", tier: 1, "active", end: -2, source: "google_iap"),
                SimulatedSubscription(
                    productID: "premium_monthly", store: "play_store", purchaseDate: d(-32), expiresDate: d(-2),
                    gracePeriodExpiresDate: d(5), billingIssuesDetectedAt: d(-2), price: price("2.50", "USD"))
            ),
            (
                row("u4-restored-eur", tier: 0, "expired", end: -12, product: "premium_annual"),
                SimulatedSubscription(productID: "premium_annual", purchaseDate: d(-1), expiresDate: d(364), price: price("49.99", "EUR"))
            ),
            (
                row("u5-billing-no-price", tier: 1, "active", end: -1),
                SimulatedSubscription(
                    productID: "premium_monthly", purchaseDate: d(-31), expiresDate: d(-1), gracePeriodExpiresDate: d(10),
                    billingIssuesDetectedAt: d(-1), price: nil)
            ),
            (
                row("u6-renewal", tier: 1, "active", end: -1),
                SimulatedSubscription(productID: "premium_monthly", purchaseDate: d(-1), expiresDate: d(29), price: price("9.99", "USD"))
            ),
            (
                row("u7-unknown-product", tier: 1, "active", end: -1),
                SimulatedSubscription(productID: "mystery_sku", purchaseDate: d(-1), expiresDate: d(29), price: price("1.00", "USD"))
            ),
        ]
        try await db.insertUsers(users.map(\.0))
        for (user, subscription) in users {
            await revenueCat.setSubscriber(SimulatedSubscriber(firstSeen: d(-400), subscriptions: [subscription]), for: user.id)
        }
        var options = RunOptions(asOf: asOf, reportDirectory: reports)
        options.concurrency = 4
        options.sweepFreeDays = 0
        let result = try await Commands.run(environment: env, options: options, logger: logger)
        return (result, server)
    }

    static func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("subrecon-ops-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    @Test("finance.csv holds exactly the seeded prices per store and currency, unknown prices counted apart")
    func financeFromSeededPrices() async throws {
        let reports = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: reports) }
        try await TestDatabase.withSchema(prefix: "ops_") { schema in
            let (url, db) = (schema.databaseURL, schema.db)
            let (result, server) = try await Self.seededRun(databaseURL: url, db: db, reports: reports)
            await server.shutdown()
            let r = result.summary.runID
            let csv = try String(contentsOf: result.folder.appendingPathComponent("finance.csv"), encoding: .utf8)
            let lines = csv.components(separatedBy: "\r\n").filter { $0.contains(",store_currency,") }
            #expect(
                lines == [
                    "\(r),store_currency,app_store,EUR,,refunds,0,0,0",
                    "\(r),store_currency,app_store,EUR,,billing_issue_at_risk,1,4.49,0",
                    "\(r),store_currency,app_store,EUR,,restored,1,49.99,0",
                    "\(r),store_currency,app_store,USD,,refunds,1,19.99,0",
                    "\(r),store_currency,app_store,USD,,billing_issue_at_risk,0,0,0",
                    "\(r),store_currency,app_store,USD,,restored,0,0,0",
                    "\(r),store_currency,app_store,unknown,,refunds,0,0,0",
                    "\(r),store_currency,app_store,unknown,,billing_issue_at_risk,1,0,1",
                    "\(r),store_currency,app_store,unknown,,restored,0,0,0",
                    "\(r),store_currency,play_store,USD,,refunds,0,0,0",
                    "\(r),store_currency,play_store,USD,,billing_issue_at_risk,1,2.5,0",
                    "\(r),store_currency,play_store,USD,,restored,0,0,0",
                ])
            #expect(csv.hasPrefix("run_id,section,store,currency,product_id,figure,count,value,unknown_price\r\n"))
            #expect(csv.contains("\(r),product_drift,,,pro_monthly,missed_refund,1,,\r\n"))
            #expect(csv.contains("\(r),product_drift,,,premium_monthly,billing_issue_entered,3,,\r\n"))

            // summary.json carries the same figures; summary.md and summary.html are in the folder.
            let eur = try #require(result.summary.finance.buckets["app_store|EUR"])
            #expect(eur.restored.value == Decimal(string: "49.99")!)
            let md = try String(contentsOf: result.folder.appendingPathComponent("summary.md"), encoding: .utf8)
            #expect(md.contains("| app_store | EUR | revenue | 0 | 1 (4.49) | 1 (49.99) | 0 |"))
            let html = try Data(contentsOf: result.folder.appendingPathComponent("summary.html"))
            #expect(XMLParser(data: html).parse())
            let htmlText = String(decoding: html, as: UTF8.self)
            #expect(!htmlText.contains("<script"))
            #expect(htmlText.contains("<title>\(r): 4.49 EUR</title>"))

            // products check: the unknown product seen at the source is reported.
            let check = try ProductCheck.check(reportDirectory: reports, catalog: ProductCatalog(Self.products))
            #expect(check.missing.map(\.productID) == ["mystery_sku"])
            #expect(check.missing.first?.skippedUsers == 1)
            #expect(check.lines.first?.hasPrefix("warning: product mystery_sku seen in run \(r)") == true)
        }
    }

    @Test("the HTML charts revenue at risk across runs read back from reconcile_runs")
    func historyAcrossRuns() async throws {
        let reports = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: reports) }
        try await TestDatabase.withSchema(prefix: "ops_") { schema in
            let (url, db) = (schema.databaseURL, schema.db)
            let (first, server) = try await Self.seededRun(databaseURL: url, db: db, reports: reports)
            await server.shutdown()
            let history = try await db.history.recentRunSummaries(shard: .all, limit: 30)
            #expect(history.map(\.id) == [first.summary.runID])
            let point = try #require(
                RunHistoryPoint(
                    runID: history[0].id, startedAt: history[0].startedAt, status: .completed, summaryJSON: history[0].countsJSON))
            #expect(point.atRisk["EUR"] == Decimal(string: "4.49")!)
            #expect(point.atRiskUsers == 3)
        }
    }

    @Test("metrics go to an atomically written file and to a Pushgateway PUT under the shard's group")
    func metricsFileAndPush() async throws {
        let reports = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: reports) }
        try await TestDatabase.withSchema(prefix: "ops_") { schema in
            let (url, db) = (schema.databaseURL, schema.db)
            let gateway = RecordingPushgateway()
            let (result, server) = try await Self.seededRun(databaseURL: url, db: db, reports: reports, routes: [gateway])
            let file = reports.appendingPathComponent("subrecon.prom")
            let ok = await MetricsPublisher.publish(
                runFolder: result.folder, shard: .all, metricsFile: file.path, pushgatewayURL: server.baseURL + "/",
                logger: Logger(label: "subrecon.ops.tests"))
            let pushes = await gateway.requests
            await server.shutdown()
            #expect(ok)
            let text = try String(contentsOf: file, encoding: .utf8)
            #expect(text == (try String(contentsOf: result.folder.appendingPathComponent("metrics.prom"), encoding: .utf8)))
            let parsed = try PrometheusTextParser(text)
            #expect(parsed.samples.allSatisfy { $0.labels["shard"] == "0_1" })
            #expect(parsed.value("subrecon_run_users", ["action": "restore"]) == 1)
            #expect(parsed.value("subrecon_run_users_drift", ["drift": "missed_refund"]) == 1)
            let requests = try #require(parsed.value("subrecon_run_requests", ["source": "revenuecat"]))
            #expect(requests == Double(result.summary.requests["revenuecat"]?.requests ?? -1))
            #expect(requests > 0)
            #expect(parsed.value("subrecon_run_exit_code") == Double(result.summary.exitCode))
            let finished = try #require(result.summary.finishedAt.flatMap(ISO8601.date))
            #expect(parsed.value("subrecon_last_success_timestamp_seconds") == finished.timeIntervalSince1970)
            let leftovers = try FileManager.default.contentsOfDirectory(atPath: reports.path).filter { $0.hasSuffix(".tmp") }
            #expect(leftovers.isEmpty)
            #expect(pushes.count == 1)
            #expect(pushes.first?.method == "PUT")
            #expect(pushes.first?.path == "/metrics/job/subrecon/shard/0_1")
            #expect(pushes.first.map { String(decoding: $0.body, as: UTF8.self) } == text)
            #expect(pushes.first?.headers["content-type"]?.hasPrefix("text/plain; version=0.0.4") == true)
        }
    }
}
