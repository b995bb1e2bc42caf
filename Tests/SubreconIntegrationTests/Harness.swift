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
import SubreconTestWorld
import Testing

/// A real PostgreSQL schema of its own, the loopback store simulator and an environment pointing at both:
/// the job runs through `Commands.run` exactly as `subrecon run` does.
struct Harness {
    static let isEnabled = TestDatabase.isEnabled
    static let skip = TestDatabase.skipMessage
    static let asOf = JobWorld.asOf
    static let bundleID = JobWorld.bundleID
    static let sharedSecret = JobWorld.sharedSecret
    static let products = JobWorld.products

    /// The simulators, the environment and the report folder: a job world over this harness's schema.
    let world: JobWorld
    let db: SubscriptionDatabase
    let client: PostgresClient
    var revenueCat: RevenueCatSimulator { world.revenueCat }
    var appStore: AppStoreSimulator { world.appStore }
    /// Apple's notification history (the App Store feed), signed with the same test PKI.
    var history: AppleNotificationHistorySimulator { world.history }
    /// Apple's legacy `verifyReceipt`; in the environment only with `with(receipts: true)`.
    var receipts: AppleReceiptSimulator { world.receipts }
    var server: SimulatorServer { world.server }
    var env: ProcessEnvironment { world.env }
    var reportDirectory: URL { world.reportDirectory }
    var logger: Logger { world.logger }

    static func day(_ n: Double) -> Date { JobWorld.day(n) }

    /// Runs `body` with a fresh migrated schema (dropped afterwards, `TestDatabase.withSchema`) holding the
    /// harness's products, a simulator and a report folder (`JobWorld.with` over `PostgresWorldDatabase`).
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
            try await schema.db.catalog.upsertProducts(products)
            try await JobWorld.with(
                PostgresWorldDatabase(schema: schema), databaseURL: schema.databaseURL, apple: apple, receipts: useReceipts,
                revenueCat: revenueCat, routes: routes, extra: extra
            ) { world in
                try await body(Harness(world: world, db: schema.db, client: schema.client))
            }
        }
    }

    func options(_ configure: (inout RunOptions) -> Void = { _ in }) -> RunOptions { world.options(configure) }

    /// `subrecon run` with this harness's environment.
    func run(_ configure: (inout RunOptions) -> Void = { _ in }) async throws -> RunResult {
        try await Commands.run(environment: env, options: options(configure), logger: logger)
    }

    func row(
        _ id: String, tier: Int, _ status: String, end: Double?, grace: Double? = nil, product: String = "premium_monthly",
        txn: String? = nil
    ) -> UserRow {
        world.row(id, tier: tier, status, end: end, grace: grace, product: product, txn: txn)
    }

    static func subscription(
        _ product: String = "premium_monthly", purchased: Double = -30, expires: Double?, grace: Double? = nil,
        refunded: Double? = nil, billing: Double? = nil, txn: String? = nil, price: Decimal? = 9.99, currency: String = "USD"
    ) -> SimulatedSubscription {
        JobWorld.subscription(
            product, purchased: purchased, expires: expires, grace: grace, refunded: refunded, billing: billing, txn: txn, price: price,
            currency: currency)
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
    func report(_ result: RunResult) throws -> [String: ReportRow] { try world.report(result) }

    func csvLines(_ result: RunResult, _ name: String) throws -> [String] { try world.csvLines(result, name) }
}
