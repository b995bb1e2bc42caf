import Foundation
import Logging
import PostgresNIO
import SubreconApp
import SubreconCore
import SubreconDatabase
import SubreconDemo
import SubreconJob

/// The benchmark's PostgreSQL: `DATABASE_URL` if given, else a throwaway local cluster; always a schema of its
/// own (`subrecon_bench_<random>`, dropped at the end) so an existing database is never touched.
struct BenchDatabase {
    let url: String
    let schema: String
    let settings: DatabaseSettings
    private let local: LocalPostgres?
    private let baseSettings: DatabaseSettings

    static let product = "bench.premium.monthly"
    static let entitlement = "premium"

    static func open(logger: Logger) async throws -> BenchDatabase {
        let environment = ProcessInfo.processInfo.environment
        var local: LocalPostgres?
        var base = environment["DATABASE_URL"] ?? ""
        if base.isEmpty {
            local = try LocalPostgres.start(environment: ProcessEnvironment(environment), logger: logger)
            base = local!.url
        }
        let schema = "subrecon_bench_\(UInt32.random(in: 0...UInt32.max))"
        let url = base + (base.contains("?") ? "&" : "?") + "search_path=\(schema)"
        let baseSettings = try DatabaseSettings(environment: ["DATABASE_URL": base])
        let settings = try DatabaseSettings(environment: ["DATABASE_URL": url])
        let database = BenchDatabase(url: url, schema: schema, settings: settings, local: local, baseSettings: baseSettings)
        try await database.withClient(base: true, logger: logger) { client in
            _ = try await client.query(PostgresQuery(unsafeSQL: "create schema \(schema)"), logger: logger)
        }
        try await database.withDatabase(logger: logger) { db, _ in
            _ = try await db.migrate()
            try await db.catalog.upsertProducts([.init(productID: product, tier: 1, entitlement: entitlement)])
        }
        return database
    }

    /// Drops the schema (and stops the throwaway cluster).
    func close(logger: Logger) async {
        _ = try? await withClient(base: true, logger: logger) { client in
            _ = try await client.query(PostgresQuery(unsafeSQL: "drop schema if exists \(schema) cascade"), logger: logger)
        }
        local?.stop()
    }

    func withClient<T: Sendable>(
        base: Bool = false, logger: Logger, _ body: @Sendable (PostgresClient) async throws -> T
    ) async throws -> T {
        let client = PostgresClient(
            configuration: (base ? baseSettings : settings).clientConfiguration(direct: true), backgroundLogger: logger)
        return try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask {
                await client.run()
                return nil
            }
            await Task.yield()
            defer { group.cancelAll() }
            return try await body(client)
        }
    }

    func withDatabase<T: Sendable>(logger: Logger, _ body: @Sendable (SubscriptionDatabase, PostgresClient) async throws -> T) async throws
        -> T
    {
        try await withClient(logger: logger) { client in
            let database = SubscriptionDatabase(client: client, logger: logger, identifierColumns: StoreRegistry.identifierColumns)
            // Rows read as a run reads them (`account_token` when present); before `migrate` there is nothing to check.
            let relation = try? await database.checkUsers(requiring: [], writable: false)
            return try await body(relation.map { database.with(users: $0) } ?? database, client)
        }
    }

    /// (Re)fills `users` with `users` rows, every `stride`-th of which is a nightly candidate (CONTRACT "Which users a run asks about"):
    /// candidates are 70% paid-and-ended, 10% billing issue, 20% recently expired; the others are a mix of paid
    /// users whose period runs on, free users and users who lapsed long ago. Even candidates are App Store users
    /// (original transaction id `tx<i>`). One `insert ... select from generate_series`, then `analyze`.
    func seedUsers(users: Int, stride: Int, asOf: Date, logger: Logger) async throws {
        let sql = """
            insert into users (id, current_tier, subscription_status, subscription_end_date, subscription_source,
                iap_product_id, iap_original_transaction_id, auto_renew)
            select BenchUser.id(i), tier, status, end_date, source, $1, tx, true from (
                select i, cand, c,
                    case when cand then (case when c % 10 < 8 then 1 else 0 end) when i % 3 = 0 then 1 else 0 end as tier,
                    case when cand then (case when c % 10 < 7 then 'active' when c % 10 = 7 then 'billing_issue' else 'expired' end)
                         when i % 3 = 0 then 'active' when i % 3 = 1 then 'none' else 'expired' end as status,
                    case when cand then $2::timestamptz - interval '1 hour' * (1 + c % 400)
                         when i % 3 = 0 then $2::timestamptz + interval '1 hour' * (1 + i % 700)
                         when i % 3 = 1 then null
                         else $2::timestamptz - interval '1 day' * (100 + i % 300) end as end_date,
                    case when cand and c % 2 = 0 then 'app_store' else 'stripe' end as source,
                    case when cand and c % 2 = 0 then 'tx' || i end as tx
                from (select i, i % $3 = 0 as cand, i / $3 as c from generate_series(1, $4) as i) as s
            ) as u
            """.replacingOccurrences(of: "BenchUser.id(i)", with: "'u' || lpad(i::text, 9, '0')")
        var binds = PostgresBindings()
        binds.append(Self.product)
        binds.append(asOf)
        binds.append(stride)
        binds.append(users)
        let insert = PostgresQuery(unsafeSQL: sql, binds: binds)
        try await withClient(logger: logger) { client in
            _ = try await client.query(PostgresQuery(unsafeSQL: "truncate users"), logger: logger)
            _ = try await client.query(insert, logger: logger)
            _ = try await client.query(PostgresQuery(unsafeSQL: "vacuum analyze users"), logger: logger)
        }
    }
}

/// One seeded candidate, as the simulator must know it.
struct BenchCandidate: Sendable {
    var index: Int
    var ordinal: Int
    var id: String { String(format: "u%09d", index) }
    var isAppStore: Bool { ordinal % 2 == 0 }
    var transactionID: String { "tx\(index)" }
    /// Every fifth candidate really lapsed (one day before T); the others renewed (30 days after T).
    var renewed: Bool { ordinal % 5 != 4 }

    /// The candidates `BenchDatabase.seedUsers` wrote, in id order.
    static func all(users: Int, stride: Int) -> [BenchCandidate] {
        Swift.stride(from: stride, through: users, by: stride).map { BenchCandidate(index: $0, ordinal: $0 / stride) }
    }
}
