import Logging
import PostgresNIO
import SubreconDatabase
import SubreconPorts
import SubreconTestSupport
import Testing

@Suite("SchemaMigrator (real PostgreSQL)", .serialized, .enabled(if: TestDatabase.isEnabled, TestDatabase.skipMessage))
struct MigrationTests {
    @Test("migrating twice applies every migration once and records it")
    func idempotent() async throws {
        try await TestDatabase.withDatabase(migrated: false) { db, client in
            await #expect(throws: DatabaseError.schemaMissing(table: "subrecon_schema_migrations")) {
                try await db.requireSchema()
            }
            let all = SchemaMigrator.migrations.map(\.version)
            #expect(try await db.migrate() == all)
            #expect(try await db.migrate() == [])
            try await db.requireSchema()
            let versions = try await SchemaMigrator().appliedVersions(client: client, logger: db.logger)
            #expect(versions == Set(all))
            for table in [
                "users", "product_tiers", "push_intents", "reconcile_runs", "reconcile_changes", "reconcile_verdicts", "apple_receipts",
            ] {
                let exists = try await TestDatabase.scalar(
                    client, "select to_regclass(\(table)) is not null", as: Bool.self)
                #expect(exists == true, "\(table)")
            }
        }
    }

    @Test("concurrent migrators serialise on the advisory lock")
    func concurrent() async throws {
        try await TestDatabase.withDatabase(migrated: false) { db, _ in
            async let first = db.migrate()
            async let second = db.migrate()
            let applied = try await [first, second]
            #expect(applied.flatMap { $0 } == SchemaMigrator.migrations.map(\.version))
        }
    }

    @Test("a later migration is appended and applied alone")
    func appended() async throws {
        try await TestDatabase.withDatabase { db, client in
            var migrations = SchemaMigrator.migrations
            let current = SchemaMigrator().latestVersion
            migrations.append(
                SchemaMigration(version: current + 1, name: "test column", statements: ["alter table users add column note text"]))
            let migrator = SchemaMigrator(migrations: migrations)
            await #expect(throws: DatabaseError.schemaOutdated(current: current, required: current + 1)) {
                try await db.requireSchema(migrator)
            }
            #expect(try await db.migrate(migrator) == [current + 1])
            try await db.requireSchema(migrator)
            let column = try await TestDatabase.scalar(
                client,
                "select count(*)::int from information_schema.columns where table_schema = current_schema() and table_name = 'users' and column_name = 'note'",
                as: Int.self)
            #expect(column == 1)
        }
    }

    @Test("a missing table tells the operator to run subrecon migrate")
    func missingTable() async throws {
        try await TestDatabase.withDatabase(migrated: false) { db, _ in
            let error = await #expect(throws: DatabaseError.self) {
                _ = try await db.candidates.candidatePage(.init(asOf: Fixture.asOf), after: nil, limit: 10)
            }
            #expect(error == .schemaMissing(table: "users"))
            #expect(error?.description.contains("subrecon migrate") == true)
        }
    }

    @Test("an unreachable server and a refused database are told apart")
    func reachability() async throws {
        var unreachable = try TestDatabase.settings()
        unreachable.host = "127.0.0.1"
        unreachable.unixSocketPath = nil
        unreachable.port = 1
        let error = await #expect(throws: DatabaseError.self) {
            try await SubscriptionDatabase.checkReachable(unreachable, logger: Logger(label: "test"))
        }
        #expect(error?.isUnavailable == true)

        var refused = try TestDatabase.settings()
        refused.database = "no_such_database_subrecon"
        let rejection = await #expect(throws: DatabaseError.self) {
            try await SubscriptionDatabase.checkReachable(refused, logger: Logger(label: "test"))
        }
        #expect(rejection?.isUnavailable == false)
        if case .rejected = rejection {} else { Issue.record("expected .rejected, got \(String(describing: rejection))") }

        try await SubscriptionDatabase.checkReachable(try TestDatabase.settings(), logger: Logger(label: "test"))
    }
}
