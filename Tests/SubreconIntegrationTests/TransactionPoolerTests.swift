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
import Testing

/// `SUBRECON_TEST_PGBOUNCER_TRANSACTION_URL`, when set and not empty.
enum TransactionPooler {
    static let url = ProcessInfo.processInfo.environment["SUBRECON_TEST_PGBOUNCER_TRANSACTION_URL"].flatMap { $0.isEmpty ? nil : $0 }
}

/// The job behind a stock PgBouncer in transaction mode (docs/CONTRACT.md, "The session"): each transaction may run on
/// another server connection, and those connections go on to serve the app. `scripts/pgbouncer-start` hands out
/// server connections round robin, so consecutive transactions of one client do land on different ones.
@Suite(
    "The job behind a pooler in transaction mode", .serialized, .enabled(if: Harness.isEnabled, Harness.skip),
    .enabled(
        if: TransactionPooler.url != nil,
        "SUBRECON_TEST_PGBOUNCER_TRANSACTION_URL is not set: scripts/test starts a PgBouncer when pgbouncer is installed"),
    .timeLimit(.minutes(5)))
struct TransactionPoolerTests {
    static let pooler = TransactionPooler.url

    @Test(
        "migrate, run and rerun through a transaction pooler: the tables in the schema asked for, the same rows and reports as a direct run, no setting left on the pooler's connections"
    )
    func migrateRunAndRerun() async throws {
        try await Harness.with { h in
            let ids = try await h.seedChanging(prefix: "tp")
            let direct = OperatorDatabaseTests.schema(of: h)
            let pooled = "tp_" + direct.suffix(16)
            let publicTables = try await h.count("select count(*)::int from pg_tables where schemaname = 'public'")
            try await h.client.query(PostgresQuery(unsafeSQL: "create schema \(pooled)"))
            do {
                try await Self.night(h, ids: ids, direct: direct, pooled: pooled, publicTables: publicTables)
            } catch {
                _ = try? await h.client.query(PostgresQuery(unsafeSQL: "drop schema \(pooled) cascade"))
                throw error
            }
            try await h.client.query(PostgresQuery(unsafeSQL: "drop schema \(pooled) cascade"))
        }
    }

    /// `migrate` into the empty schema `pooled` through the pooler, the same users there as in `direct`, then two
    /// nights in each schema, directly and through the pooler.
    static func night(_ h: Harness, ids: [String], direct: String, pooled: String, publicTables: Int) async throws {
        var env = h.env
        env.values["DATABASE_URL"] = try #require(Self.pooler) + "&search_path=" + pooled
        // Other clients' transactions leave the pooler several server connections to rotate through.
        try await Self.busyPooler()

        #expect(try await Commands.migrate(environment: env, logger: h.logger) == .ok)
        let created: PostgresQuery = "select count(*)::int from pg_tables where schemaname = \(pooled) and tablename = 'reconcile_runs'"
        #expect(try await h.count(created) == 1, "the job's tables are in the schema asked for")
        #expect(try await h.count("select count(*)::int from pg_tables where schemaname = 'public'") == publicTables)
        // The same users and products in both schemas (every column: the two were migrated alike).
        for table in ["users", "product_tiers"] {
            try await h.client.query(PostgresQuery(unsafeSQL: "insert into \(pooled).\(table) select * from \(direct).\(table)"))
        }

        var nights: [String: [String]] = [:]
        for (name, environment) in [("direct", h.env), ("pooled", env)] {
            let first = try await Commands.run(environment: environment, options: h.options(), logger: h.logger)
            let again = try await Commands.run(environment: environment, options: h.options(), logger: h.logger)
            #expect(first.exitStatus == .ok && again.exitStatus == .ok, "\(name)")
            #expect(first.summary.applied == ids.count && again.summary.applied == 0, "\(name)")
            let schema = name == "direct" ? direct : pooled
            nights[name] =
                try Self.lines(h.report(first), ids) + Self.lines(h.report(again), ids) + (try await Self.stored(h, schema: schema))
        }
        #expect(nights["direct"]?.count == 3 * ids.count + 4)
        #expect(nights["pooled"] == nights["direct"])
        #expect(try await Self.serverSettings().isEmpty, "the job's settings were left on the pooler's server connections")
    }

    @Test("a second run of the same shard through a transaction pooler exits 4 while the first runs; never two running")
    func secondRunOfTheShard() async throws {
        try await Harness.with { h in
            _ = try await h.seedChanging(prefix: "tl", count: 8)
            var pooled = h.env
            pooled.values["DATABASE_URL"] = try #require(Self.pooler) + "&search_path=" + OperatorDatabaseTests.schema(of: h)
            let env = pooled
            await h.revenueCat.setLatency(.milliseconds(300))
            let options = h.options { $0.concurrency = 1 }
            let first = Task { try await Commands.run(environment: env, options: options, logger: h.logger) }
            for _ in 0..<400 where await h.revenueCat.counters().totalRequests == 0 {
                try await Task.sleep(for: .milliseconds(25))
            }
            #expect(await h.revenueCat.counters().totalRequests > 0, "the first run is asking the store")
            let (status, _) = try await OwnTablesTests.failure {
                _ = try await Commands.run(environment: env, options: options, logger: h.logger)
            }
            #expect(status == .shardLocked)
            #expect(try await h.count("select count(*)::int from reconcile_runs") == 1)
            let result = try await first.value
            #expect(result.exitStatus == .ok)
            #expect(result.summary.applied == 8)
        }
    }

    // MARK: Helpers

    /// One line per user of a run's report: its action, drift and whether it was applied.
    static func lines(_ report: [String: ReportRow], _ ids: [String]) -> [String] {
        ids.map { id in
            let row = report[id]
            return "\(id) \(row?.action ?? "-") \(row?.drift.joined(separator: ";") ?? "-") \(row?.applied ?? false)"
        }
    }

    /// The users as stored in `schema`, then its counts of runs, audit rows, intents and ledger rows.
    static func stored(_ h: Harness, schema: String) async throws -> [String] {
        var lines: [String] = []
        let users = PostgresQuery(
            unsafeSQL: """
                select id || ' ' || current_tier || ' ' || subscription_status || ' ' || coalesce(subscription_end_date::text, '-') \
                from \(schema).users order by id
                """)
        for try await line in try await h.client.query(users).decode(String.self) { lines.append(line) }
        for table in ["reconcile_runs", "reconcile_changes", "push_intents", "reconcile_verdicts"] {
            let count = try await h.count(PostgresQuery(unsafeSQL: "select count(*)::int from \(schema).\(table)"))
            lines.append("\(table) \(count)")
        }
        return lines
    }

    /// A few transactions at once through the pooler, so it opens that many server connections.
    static func busyPooler() async throws {
        let settings = try DatabaseSettings(environment: ["DATABASE_URL": try #require(pooler)])
        try await withThrowingTaskGroup(of: Void.self) { group in
            for id in 0..<4 {
                group.addTask {
                    let connection = try await PostgresConnection.connect(
                        configuration: try settings.connectionConfiguration(), id: id, logger: Logger(label: "pooler"))
                    try await connection.query("begin", logger: Logger(label: "pooler"))
                    try await connection.query("select pg_sleep(0.2)", logger: Logger(label: "pooler"))
                    try await connection.query("commit", logger: Logger(label: "pooler"))
                    try await connection.close()
                }
            }
            try await group.waitForAll()
        }
    }

    /// The settings a server connection of the pooler carries that are not the server's defaults, read on every server
    /// connection it has (a fresh client, one statement each: the pooler hands them out round robin).
    static func serverSettings() async throws -> [String] {
        let settings = try DatabaseSettings(environment: ["DATABASE_URL": try #require(pooler)])
        let logger = Logger(label: "pooler")
        let connection = try await PostgresConnection.connect(configuration: try settings.connectionConfiguration(), id: 7, logger: logger)
        var found: [String] = []
        for _ in 0..<60 {
            let rows = try await connection.query(
                """
                select current_setting('search_path') || ' ' || current_setting('statement_timeout') || ' ' \
                || current_setting('lock_timeout') || ' ' || current_setting('idle_in_transaction_session_timeout')
                """, logger: logger)
            for try await line in rows.decode(String.self) where line != "\"$user\", public 0 0 0" { found.append(line) }
        }
        try await connection.close()
        return found
    }
}
