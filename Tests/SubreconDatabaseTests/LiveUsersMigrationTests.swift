import Foundation
import Logging
import PostgresNIO
import SubreconCore
import SubreconDatabase
import SubreconTestKit
import SubreconTestSupport
import Testing

/// Migrations on subrecon's own `users` while the app writes it (docs/CONTRACT.md, "Database"): an index is built
/// concurrently, so a webhook's UPDATE never waits for the build; an index an interrupted build left invalid is
/// dropped and built again before the version is recorded; two migrators racing build it once.
@Suite("Migrations on a live users table (real PostgreSQL)", .serialized, .enabled(if: TestDatabase.isEnabled, TestDatabase.skipMessage))
struct LiveUsersMigrationTests {
    static let rows = 200_000
    static let indexes = ["users_iap_original_transaction_idx", "users_stripe_customer_idx", "users_google_purchase_token_idx"]
    /// What a migrate from version 10 applies: 11 and every later migration (those build no index on `users`).
    static let fromEleven = Array(11...(SchemaMigrator.migrations.last?.version ?? 11))

    /// A schema at version 10 whose `users` holds `rows` rows with every store identifier set.
    static func atVersion10(_ schema: TestSchema) async throws {
        let migrator = SchemaMigrator(migrations: SchemaMigrator.migrations.filter { $0.version <= 10 })
        _ = try await schema.db.migrate(migrator)
        try await schema.client.query(
            """
            insert into users (id, current_tier, iap_original_transaction_id, stripe_customer_id, google_purchase_token)
            select 'u' || g, 1, 'apple-' || g, 'cus_' || g, 'gp-' || md5(g::text) from generate_series(1, \(rows)) g
            """)
    }

    /// Two connections of the app's own (webhook handlers), outside the test's pool, closed after `body`.
    static func withAppConnections<T>(
        _ schema: TestSchema, _ body: (PostgresConnection, PostgresConnection) async throws -> T
    ) async throws -> T {
        let configuration = try schema.settings.connectionConfiguration()
        let logger = Logger(label: "test.app")
        let first = try await PostgresConnection.connect(configuration: configuration, id: 1, logger: logger)
        let second: PostgresConnection
        do {
            second = try await PostgresConnection.connect(configuration: configuration, id: 2, logger: logger)
        } catch {
            try? await first.close()
            throw error
        }
        do {
            let value = try await body(first, second)
            try? await first.close()
            try? await second.close()
            return value
        } catch {
            try? await first.close()
            try? await second.close()
            throw error
        }
    }

    /// Whether a statement building one of `names` on this schema's `users` is running (or waiting) right now.
    static func building(_ schema: TestSchema, _ names: [String] = [indexes[0]]) async throws -> Bool {
        let query: PostgresQuery = """
            select exists (select 1 from pg_stat_activity a where a.state = 'active' and a.query ilike '%create index%'
                and exists (select 1 from unnest(\(names)::text[]) n where a.query like '%' || n || '%')
                and exists (select 1 from pg_locks l where l.pid = a.pid
                and l.relation = to_regclass(\("\(schema.name).users"))))
            """
        return try await TestDatabase.scalar(schema.client, query, as: Bool.self) == true
    }

    static func validIndexes(_ schema: TestSchema) async throws -> Int {
        let names = indexes.map { "\(schema.name).\($0)" }
        let query: PostgresQuery =
            "select count(*)::int from pg_index where indexrelid = any(array(select to_regclass(n) from unnest(\(names)::text[]) n)) and indisvalid"
        return try await TestDatabase.scalar(schema.client, query, as: Int.self) ?? 0
    }

    static func waitUntil(_ what: Comment, _ condition: () async throws -> Bool) async throws {
        let start = ContinuousClock.now
        while try await !condition() {
            guard ContinuousClock.now - start < .seconds(60) else {
                Issue.record("not reached within 60 s: \(what)")
                return
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// One app UPDATE of `id` under a 2 s lock_timeout: how long it took, and its error.
    static func appUpdate(_ connection: PostgresConnection, _ schema: TestSchema, _ id: String) async -> (Duration, (any Error)?) {
        let clock = ContinuousClock()
        let start = clock.now
        do {
            try await connection.query(
                "update \(unescaped: schema.name).users set updated_at = now(), current_tier = current_tier where id = \(id)",
                logger: Logger(label: "test.app"))
            return (clock.now - start, nil)
        } catch {
            return (clock.now - start, error)
        }
    }

    @Test("the app's UPDATE of users goes through while migration 11 builds its indexes; the version follows the build")
    func appWritesDuringBuild() async throws {
        try await TestDatabase.withSchema { schema in
            try await Self.atVersion10(schema)
            // A webhook's transaction in flight: it holds users' row-exclusive lock until it commits.
            try await Self.withAppConnections(schema) { inFlight, webhook in
                try await webhook.query("set lock_timeout = '2s'", logger: Logger(label: "test.app"))
                try await inFlight.query("begin", logger: Logger(label: "test.app"))
                try await inFlight.query(
                    "update \(unescaped: schema.name).users set updated_at = now() where id = 'u1'", logger: Logger(label: "test.app"))
                let migration = Task { try await schema.db.migrate() }
                try await Self.waitUntil("the index build started") { try await Self.building(schema) }
                // Another webhook now: it must not queue behind the build.
                let (wait, error) = await Self.appUpdate(webhook, schema, "u2")
                #expect(error == nil, "the app's UPDATE waited \(wait) and failed: \(String(describing: error))")
                #expect(try await Self.building(schema), "the UPDATE completed while the build still waited")
                let versions = try await SchemaMigrator().appliedVersions(client: schema.client, logger: schema.db.logger)
                #expect(!versions.contains(11), "version 11 recorded before its indexes were built")
                print("app UPDATE during migration 11's build (a transaction in flight): waited \(wait)")
                try await inFlight.query("commit", logger: Logger(label: "test.app"))
                // While the build reads the table, webhooks keep writing.
                var longest = Duration.zero
                var updates = 0
                while try await Self.building(schema, Self.indexes) {
                    let (wait, error) = await Self.appUpdate(webhook, schema, "u\(updates % 1000 + 3)")
                    #expect(error == nil, "an UPDATE during the build: \(String(describing: error))")
                    longest = max(longest, wait)
                    updates += 1
                }
                print("app UPDATEs during migration 11's build: \(updates), the longest waited \(longest)")
                #expect(try await migration.value == Self.fromEleven)
            }
            #expect(try await Self.validIndexes(schema) == 3)
        }
    }

    @Test("an index an interrupted build left invalid is dropped and built again, then the version is recorded")
    func invalidLeftover() async throws {
        try await TestDatabase.withSchema { schema in
            try await Self.atVersion10(schema)
            try await schema.client.query("update users set stripe_customer_id = 'cus_dup' where id in ('u1', 'u2')")
            // A concurrent build that fails (here on a duplicate) leaves its index behind, invalid, under the name.
            await #expect(throws: (any Error).self) {
                try await schema.client.query(
                    "create unique index concurrently users_stripe_customer_idx on users (stripe_customer_id) where stripe_customer_id is not null"
                )
            }
            #expect(try await Self.validIndexes(schema) == 0)
            #expect(try await schema.db.migrate() == Self.fromEleven)
            #expect(try await Self.validIndexes(schema) == 3)
            let definition = try await TestDatabase.scalar(
                schema.client, "select pg_get_indexdef(to_regclass('users_stripe_customer_idx'))", as: String.self)
            #expect(
                definition?.hasPrefix("CREATE INDEX users_stripe_customer_idx ON \(schema.name).users") == true, "\(definition ?? "none")")
            #expect(definition?.hasSuffix("(stripe_customer_id) WHERE (stripe_customer_id IS NOT NULL)") == true, "\(definition ?? "none")")
            try await schema.db.requireSchema()
        }
    }

    @Test("two migrators upgrading a populated users at once build each index once and record 11 once")
    func racingUpgrades() async throws {
        try await TestDatabase.withSchema { schema in
            try await Self.atVersion10(schema)
            async let first = schema.db.migrate()
            async let second = schema.db.migrate()
            let applied = try await [first, second]
            #expect(applied.flatMap { $0 } == Self.fromEleven)
            #expect(try await Self.validIndexes(schema) == 3)
            try await schema.db.requireSchema()
        }
    }
    @Test("a build past its bound is cancelled on the server, the version is not recorded, and the next migrate builds it")
    func boundedBuild() async throws {
        try await TestDatabase.withSchema { schema in
            try await Self.atVersion10(schema)
            try await Self.withAppConnections(schema) { inFlight, _ in
                // The build waits for this transaction, longer than its bound.
                try await inFlight.query("begin", logger: Logger(label: "test.app"))
                try await inFlight.query(
                    "update \(unescaped: schema.name).users set updated_at = now() where id = 'u1'", logger: Logger(label: "test.app"))
                let bounded = SchemaMigrator(indexBuildTimeout: .seconds(1))
                let error = await #expect(throws: DatabaseError.self) { try await schema.db.migrate(bounded) }
                #expect(error?.description.contains("SUBRECON_DB_STATEMENT_TIMEOUT_SECONDS") == true, "\(String(describing: error))")
                #expect(try await !Self.building(schema, Self.indexes), "the build is cancelled on the server, not left running")
                let versions = try await SchemaMigrator().appliedVersions(client: schema.client, logger: schema.db.logger)
                #expect(!versions.contains(11))
                try await inFlight.query("commit", logger: Logger(label: "test.app"))
            }
            #expect(try await schema.db.migrate() == Self.fromEleven)
            #expect(try await Self.validIndexes(schema) == 3)
        }
    }

    @Test(
        "through a pooler in transaction mode the indexes are built concurrently in the schema asked for",
        .enabled(
            if: PoolerLockTests.transactionPooler != nil,
            "SUBRECON_TEST_PGBOUNCER_TRANSACTION_URL is not set: scripts/test starts a PgBouncer when pgbouncer is installed"))
    func transactionPooler() async throws {
        try await TestDatabase.withSchema { schema in
            try await Self.atVersion10(schema)
            var settings = try DatabaseSettings(environment: ["DATABASE_URL": try #require(PoolerLockTests.transactionPooler)])
            settings.searchPath = schema.name
            let client = PostgresClient(configuration: settings.clientConfiguration(maximumConnections: 4))
            let db = SubscriptionDatabase(
                client: client, logger: Logger(label: "test.pooled"), identifierColumns: IdentifierColumn.testColumns,
                session: settings.session)
            let applied = try await withThrowingTaskGroup(of: Void.self) { group -> [Int] in
                group.addTask { await client.run() }
                defer { group.cancelAll() }
                return try await db.migrate()
            }
            #expect(applied == Self.fromEleven)
            #expect(try await Self.validIndexes(schema) == 3)
            let elsewhere = try await TestDatabase.scalar(
                schema.client,
                // The pooler's default schema, where a build that lost the `search_path` would land (other suites' schemas
                // running at the same time hold the same index names).
                "select count(*)::int from pg_indexes where indexname = 'users_stripe_customer_idx' and schemaname = 'public'",
                as: Int.self)
            #expect(elsewhere == 0, "no index built outside the schema asked for")
        }
    }
    @Test("from version 4 on a populated users: ALTER TABLE waits 2 s for its lock and tries again, every index is built concurrently")
    func upgradeFromVersion4() async throws {
        try await TestDatabase.withSchema { schema in
            _ = try await schema.db.migrate(SchemaMigrator(migrations: SchemaMigrator.migrations.filter { $0.version <= 4 }))
            try await schema.client.query(
                "insert into users (id, iap_original_transaction_id) select 'u' || g, 'apple-' || g from generate_series(1, 50000) g")
            try await Self.withAppConnections(schema) { inFlight, webhook in
                try await webhook.query("set lock_timeout = '3s'", logger: Logger(label: "test.app"))
                try await inFlight.query("begin", logger: Logger(label: "test.app"))
                try await inFlight.query(
                    "update \(unescaped: schema.name).users set updated_at = now() where id = 'u1'", logger: Logger(label: "test.app"))
                let migration = Task { try await schema.db.migrate() }
                let altering: PostgresQuery = """
                    select exists (select 1 from pg_stat_activity a where a.query ilike 'alter table users%'
                        and a.wait_event_type = 'Lock' and exists (select 1 from pg_locks l where l.pid = a.pid
                        and l.relation = to_regclass(\("\(schema.name).users"))))
                    """
                try await Self.waitUntil("the ALTER waits for its lock") {
                    try await TestDatabase.scalar(schema.client, altering, as: Bool.self) == true
                }
                // Queued behind the waiting ALTER, the app's UPDATE goes through once the ALTER gives up (2 s).
                let (wait, error) = await Self.appUpdate(webhook, schema, "u2")
                #expect(error == nil, "the app's UPDATE waited \(wait) and failed: \(String(describing: error))")
                print("app UPDATE behind migration 5's ALTER TABLE users (a transaction in flight): waited \(wait)")
                try await Task.sleep(for: .seconds(3))
                try await inFlight.query("commit", logger: Logger(label: "test.app"))
                #expect(try await migration.value == Array(5...(SchemaMigrator.migrations.last?.version ?? 11)))
            }
            let invalid = try await TestDatabase.scalar(
                schema.client,
                "select count(*)::int from pg_index where indrelid = to_regclass('users') and not indisvalid", as: Int.self)
            #expect(invalid == 0)
            let count = try await TestDatabase.scalar(
                schema.client, "select count(*)::int from pg_index where indrelid = to_regclass('users')", as: Int.self)
            #expect(count == 9, "the key, three indexes of migration 1, one each of 2 and 9, three of 11")
            try await schema.db.requireSchema()
        }
    }
}
