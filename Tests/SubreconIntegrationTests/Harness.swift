import AsyncHTTPClient
import Crypto
import Foundation
import Logging
import PostgresNIO
import StoreSimulator
import SubreconApp
import SubreconCore
import SubreconDatabase
import SubreconJob
import SubreconPorts
import SubreconReports
import SubreconTestSupport
import Testing

/// A real PostgreSQL schema of its own, the loopback store simulator and an environment pointing at both:
/// the job runs through `Commands.run` exactly as `subrecon run` does.
struct Harness {
    static let isEnabled = TestDatabase.isEnabled
    static let skip = TestDatabase.skipMessage
    static let asOf = ISO8601.date("2026-06-01T03:00:00Z")!
    static let bundleID = "com.example.subrecon.tests"
    static let sharedSecret = "it0shared0secret0it0shared0secret"
    static let products: [ProductCatalog.Entry] = [
        .init(productID: "premium_monthly", tier: 1, entitlement: "premium"),
        .init(productID: "pro_monthly", tier: 2, entitlement: "pro"),
    ]

    let db: SubscriptionDatabase
    let client: PostgresClient
    let revenueCat: RevenueCatSimulator
    let appStore: AppStoreSimulator
    /// Apple's notification history (the App Store feed), signed with the same test PKI.
    let history: AppleNotificationHistorySimulator
    /// Apple's legacy `verifyReceipt`; in the environment only with `with(receipts: true)`.
    let receipts: AppleReceiptSimulator
    let server: SimulatorServer
    let env: ProcessEnvironment
    let reportDirectory: URL
    let logger = Logger(label: "subrecon.integration")

    static func day(_ n: Double) -> Date { asOf.addingTimeInterval(n * 86_400) }

    /// Runs `body` with a fresh migrated schema (dropped afterwards, `TestDatabase.withSchema`) holding the
    /// harness's products, a simulator and a report folder.
    ///
    /// - Parameters:
    ///   - revenueCat: false leaves RevenueCat unconfigured (an app without RevenueCat).
    ///   - routes: more simulators served on the same loopback server (Stripe, Google Play); their variables go in
    ///     `extra` (use `{base}` for the server's base URL).
    ///   - setUp: runs in the fresh schema before `subrecon migrate` (an app's own `users`, CONTRACT "Database").
    ///   - serverURL: another PostgreSQL than the test database (a suite's own cluster, `OwnCluster`).
    static func with(
        apple: Bool = false, receipts useReceipts: Bool = false, revenueCat: Bool = true, routes: [any SimulatorRoute] = [],
        extra: [String: String] = [:], serverURL: String? = nil, setUp: (TestSchema) async throws -> Void = { _ in },
        _ body: (Harness) async throws -> Void
    ) async throws {
        try await TestDatabase.withSchema(prefix: "it_", serverURL: serverURL) { schema in
            try await setUp(schema)
            try await schema.db.migrate()
            try await schema.db.upsertProducts(products)
            try await with(
                schema, apple: apple, receipts: useReceipts, revenueCat: revenueCat, routes: routes, extra: extra, body)
        }
    }

    /// The simulator, the report folder and the environment around `schema`; both are gone when `body` returns.
    private static func with(
        _ schema: TestSchema, apple: Bool, receipts useReceipts: Bool, revenueCat useRevenueCat: Bool, routes: [any SimulatorRoute],
        extra: [String: String], _ body: (Harness) async throws -> Void
    ) async throws {
        let apiKey = "sk_test_" + UUID().uuidString
        let appleKey = P256.Signing.PrivateKey()
        let pki = try AppleTestPKI.generate(now: asOf)
        let revenueCat = RevenueCatSimulator(apiKey: apiKey, productEntitlements: ["premium_monthly": "premium", "pro_monthly": "pro"])
        await revenueCat.setClock(asOf)
        let appStore = try AppStoreSimulator(
            pki: pki, apiPublicKey: appleKey.publicKey, issuerID: "issuer-tests", keyID: "KEYTESTS01", bundleID: bundleID,
            signedAt: { asOf })
        let history = try AppleNotificationHistorySimulator(
            pki: pki, apiPublicKey: appleKey.publicKey, issuerID: "issuer-tests", keyID: "KEYTESTS01", bundleID: bundleID)
        let receipts = AppleReceiptSimulator(sharedSecret: sharedSecret, bundleID: bundleID)
        let server = try await SimulatorServer.start(routes: [revenueCat, appStore, history, receipts] + routes)
        let reports = FileManager.default.temporaryDirectory.appendingPathComponent("subrecon-it-\(schema.name)")
        defer { try? FileManager.default.removeItem(at: reports) }
        do {
            let rootFile = reports.appendingPathComponent("root.pem")
            try FileManager.default.createDirectory(at: reports, withIntermediateDirectories: true)
            try Data(try pki.rootPEM().utf8).write(to: rootFile)
            var values = [
                "DATABASE_URL": schema.databaseURL, "REVENUECAT_API_KEY": apiKey, "REVENUECAT_BASE_URL": server.baseURL,
                "SUBRECON_HTTP_TIMEOUT_SECONDS": "2", "SUBRECON_HTTP_MAX_ATTEMPTS": "3", "SUBRECON_HTTP_BACKOFF_SECONDS": "0.01",
            ]
            if apple {
                values.merge([
                    "APP_STORE_ISSUER_ID": "issuer-tests", "APP_STORE_KEY_ID": "KEYTESTS01",
                    "APP_STORE_PRIVATE_KEY": appleKey.pemRepresentation, "APP_STORE_BUNDLE_ID": bundleID,
                    "APP_STORE_BASE_URL": server.baseURL, "APP_STORE_ROOT_CERTIFICATES": rootFile.path,
                ]) { $1 }
            }
            if useReceipts {
                values["APPLE_SHARED_SECRET"] = sharedSecret
                values["APP_STORE_BUNDLE_ID"] = bundleID
                values["APPLE_VERIFY_RECEIPT_URL"] = server.baseURL + "/verifyReceipt"
            }
            if !useRevenueCat {
                values["REVENUECAT_API_KEY"] = nil
                values["REVENUECAT_BASE_URL"] = nil
            }
            values.merge(extra.mapValues { $0.replacingOccurrences(of: "{base}", with: server.baseURL) }) { $1 }
            try await body(
                Harness(
                    db: schema.db, client: schema.client, revenueCat: revenueCat, appStore: appStore, history: history,
                    receipts: receipts,
                    server: server, env: ProcessEnvironment(values), reportDirectory: reports))
        } catch {
            await server.shutdown()
            throw error
        }
        await server.shutdown()
    }

    func options(_ configure: (inout RunOptions) -> Void = { _ in }) -> RunOptions {
        var options = RunOptions(asOf: Self.asOf, reportDirectory: reportDirectory)
        options.concurrency = 4
        options.applyPast = true  // the fixed past instant the tests seed is a deliberate replay (CONTRACT "Exit codes")
        options.sweepDays = 0  // the sweep's own tests turn it on: elsewhere a tier holder is a candidate by rule only
        options.sweepFreeDays = 0  // the free-row sweep's own tests turn it on
        configure(&options)
        return options
    }

    /// `subrecon run` with this harness's environment.
    func run(_ configure: (inout RunOptions) -> Void = { _ in }) async throws -> RunResult {
        try await Commands.run(environment: env, options: options(configure), logger: logger)
    }

    func row(
        _ id: String, tier: Int, _ status: String, end: Double?, grace: Double? = nil, product: String = "premium_monthly",
        txn: String? = nil
    ) -> UserRow {
        UserRow(
            id: id, currentTier: tier, status: status, endDate: end.map(Self.day), graceEndsAt: grace.map(Self.day),
            source: "apple_iap", productID: product, originalTransactionID: txn, autoRenew: true)
    }

    static func subscription(
        _ product: String = "premium_monthly", purchased: Double = -30, expires: Double?, grace: Double? = nil,
        refunded: Double? = nil, billing: Double? = nil, txn: String? = nil, price: Decimal? = 9.99, currency: String = "USD"
    ) -> SimulatedSubscription {
        SimulatedSubscription(
            productID: product, purchaseDate: day(purchased), expiresDate: expires.map(day), gracePeriodExpiresDate: grace.map(day),
            refundedAt: refunded.map(day), billingIssuesDetectedAt: billing.map(day), storeTransactionID: txn,
            price: price.map { SimulatedPrice(amount: $0, currency: currency) })
    }

    func seed(_ row: UserRow, _ subscriptions: SimulatedSubscription...) async throws {
        try await db.insertUsers([row])
        if !subscriptions.isEmpty {
            await revenueCat.setSubscriber(SimulatedSubscriber(firstSeen: Self.day(-300), subscriptions: subscriptions), for: row.id)
        }
    }

    /// `count` users whose verdicts change their rows: even ones lapsed (downgraded), odd ones renewed (extended).
    func seedChanging(prefix: String, count: Int = 6) async throws -> [String] {
        var ids: [String] = []
        for n in 0..<count {
            let id = String(format: "\(prefix)-%03d", n)
            ids.append(id)
            if n % 2 == 0 {
                try await seed(row(id, tier: 1, "active", end: -2), Self.subscription(expires: -2))
            } else {
                try await seed(row(id, tier: 1, "active", end: -2), Self.subscription(purchased: -2, expires: 28))
            }
        }
        return ids
    }

    func user(_ id: String) async throws -> UserRow? { try await db.user(id: id) }

    func count(_ query: PostgresQuery) async throws -> Int {
        for try await value in try await client.query(query).decode(Int.self) { return value }
        return 0
    }

    func auditRows(_ id: String) async throws -> Int {
        try await count("select count(*)::int from reconcile_changes where user_id = \(id)")
    }

    func intents(_ id: String) async throws -> Int { try await count("select count(*)::int from push_intents where user_id = \(id)") }

    /// The drift report's rows, parsed from drift.json, keyed by user id.
    func report(_ result: RunResult) throws -> [String: ReportRow] {
        let data = try Data(contentsOf: result.folder.appendingPathComponent("drift.json"))
        let rows = try JSONDecoder().decode([ReportRow].self, from: data)
        return Dictionary(uniqueKeysWithValues: rows.map { ($0.userID, $0) })
    }

    func csvLines(_ result: RunResult, _ name: String) throws -> [String] {
        let text = try String(contentsOf: result.folder.appendingPathComponent(name), encoding: .utf8)
        return text.components(separatedBy: "\r\n").filter { !$0.isEmpty }
    }
}
