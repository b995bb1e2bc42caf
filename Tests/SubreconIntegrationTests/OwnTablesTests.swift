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

/// An app's own tables (CONTRACT "Database"): `migrate` and `run` against an app's `users`, the contract check's
/// exit 78 before anything is touched, and a whole night through the shipped Supabase example
/// (`docs/supabase-users-view.sql`).
@Suite("An app's own tables", .serialized, .enabled(if: Harness.isEnabled, Harness.skip), .timeLimit(.minutes(3)))
struct OwnTablesTests {
    // MARK: The contract check through the commands

    @Test("migrate on an app's users missing a column or of the wrong type exits 78 naming them all; nothing is created")
    func migrateRefuses() async throws {
        try await TestDatabase.withSchema(prefix: "it_") { schema in
            try await schema.client.query(
                """
                create table users (id text primary key, current_tier text not null, subscription_status text, \
                subscription_end_date timestamptz, grace_period_ends_at timestamptz, iap_product_id text, \
                iap_original_transaction_id text, auto_renew boolean, updated_at timestamptz not null default now())
                """)
            let env = ProcessEnvironment(["DATABASE_URL": schema.databaseURL])
            let (status, line) = try await Self.failure { _ = try await Commands.migrate(environment: env, logger: Self.logger) }
            #expect(status == .config)
            #expect(
                line
                    == "configuration error: users (\(schema.name).users, a table) is missing subscription_source (text); "
                    + "has current_tier of type text (needs integer) (CONTRACT 'Database': fix the relation, or the view subrecon "
                    + "reads; nothing was changed)")
            for table in ["subrecon_schema_migrations", "subrecon_settings", "reconcile_runs", "product_tiers"] {
                let exists = try await TestDatabase.scalar(schema.client, "select to_regclass(\(table)) is not null", as: Bool.self)
                #expect(exists == false, "\(table) must not be created")
            }
        }
    }

    @Test("run on an app's users that lost a column exits 78 before the run row, the lock or a report folder")
    func runRefuses() async throws {
        try await Harness.with(setUp: { schema in try await schema.client.query(PostgresQuery(unsafeSQL: Self.appUsersTable)) }) { h in
            try await h.client.query("alter table users drop column auto_renew")
            let (status, line) = try await Self.failure { _ = try await h.run() }
            #expect(status == .config)
            #expect(line.hasPrefix("configuration error: users (") && line.contains("is missing auto_renew (boolean) (CONTRACT 'Database'"))
            #expect(try await h.count("select count(*)::int from reconcile_runs") == 0)
            #expect(try await h.count("select count(*)::int from reconcile_verdicts") == 0)
            let folders = (try? FileManager.default.contentsOfDirectory(atPath: h.reportDirectory.path)) ?? []
            #expect(folders.filter { $0 != "root.pem" }.isEmpty, "no run folder")
        }
    }

    @Test("Stripe configured but the app's users has no stripe_customer_id: 78 naming it, for run and migrate")
    func stripeColumnRequired() async throws {
        try await Harness.with(
            extra: ["STRIPE_API_KEY": "sk_test_own_tables"],
            setUp: { schema in try await schema.client.query(PostgresQuery(unsafeSQL: Self.appUsersTable)) }
        ) { h in
            let (status, line) = try await Self.failure { _ = try await h.run() }
            #expect(status == .config)
            #expect(line.contains("is missing stripe_customer_id (text) (CONTRACT 'Database'"))
            #expect(!line.contains("sk_test_own_tables"))
            #expect(try await h.count("select count(*)::int from reconcile_runs") == 0)
            let (migrateStatus, migrateLine) = try await Self.failure {
                _ = try await Commands.migrate(environment: h.env, logger: Self.logger)
            }
            #expect(migrateStatus == .config && migrateLine == line)
            // Without Stripe the same table runs: stripe_customer_id is read as null.
            var values = h.env.values
            values["STRIPE_API_KEY"] = nil
            let result = try await Commands.run(environment: ProcessEnvironment(values), options: h.options(), logger: Self.logger)
            #expect(result.exitStatus == .ok)
        }
    }

    // MARK: A night through the Supabase example

    @Test("a night through docs/supabase-users-view.sql: downgrade, restore and extend land in the app's tables; a rerun changes nothing")
    func supabaseNight() async throws {
        let app = Self.appSchemaName()
        try await Harness.with(setUp: { schema in try await Self.loadExample(schema, app: app) }) { h in
            try await Self.cleaningUp(app, h.client) {
                try await Self.seedNight(h, app: app)
                let profilesBefore = try await Self.shape(h.client, "\(app).profiles")
                let first = try await h.run()
                #expect(first.exitStatus == .ok)
                let rows = try h.report(first)
                #expect(rows[Self.downgraded]?.action == "downgrade" && rows[Self.downgraded]?.applied == true)
                #expect(rows[Self.restored]?.action == "restore" && rows[Self.restored]?.applied == true)
                #expect(rows[Self.extended]?.action == "extend" && rows[Self.extended]?.applied == true)
                #expect(first.summary.applied == 3)

                // The app's own tables hold the truth, in the app's terms.
                let profiles = try await Self.profiles(h.client, app: app)
                #expect(profiles[Self.downgraded]?.plan == "free")
                #expect(profiles[Self.restored]?.plan == "monthly" && profiles[Self.restored]?.expires == Harness.day(25))
                #expect(profiles[Self.extended]?.plan == "annual" && profiles[Self.extended]?.expires == Harness.day(29))
                let iosExpiry = try await TestDatabase.scalar(
                    h.client,
                    PostgresQuery(
                        unsafeSQL: "select expires_at from \(app).ios_subscriptions where user_id = '\(Self.extended)'"),
                    as: Date.self)
                #expect(iosExpiry == Harness.day(29))
                // The view reads back what was written.
                let downgraded = try #require(try await h.user(Self.downgraded))
                #expect(downgraded.currentTier == 0 && downgraded.statusText == "expired")
                let restored = try #require(try await h.user(Self.restored))
                #expect(restored.currentTier == 1 && restored.statusText == "active" && restored.productID == "premium_monthly")
                // Audit rows and intents are subrecon's, in its own schema; the app's tables keep their shape.
                #expect(try await h.count("select count(*)::int from reconcile_changes") == 3)
                #expect(try await h.intents(Self.downgraded) == 1)
                #expect(try await h.intents(Self.restored) == 1)
                #expect(try await Self.shape(h.client, "\(app).profiles") == profilesBefore)

                // A rerun finds nothing to change.
                let second = try await h.run()
                #expect(second.exitStatus == .ok)
                #expect(second.summary.applied == 0)
                #expect(second.summary.actions.filter { $0.key != "none" }.values.reduce(0, +) == 0)
                #expect(try await h.count("select count(*)::int from reconcile_changes") == 3)
                #expect(try await h.count("select count(*)::int from push_intents") == 2)
                #expect(try await Self.profiles(h.client, app: app) == profiles)
            }
        }
    }

    @Test("through the Supabase view, an app write between read and write wins (concurrent_update); the others are applied")
    func supabaseConcurrentWrite() async throws {
        let app = Self.appSchemaName()
        try await Harness.with(setUp: { schema in try await Self.loadExample(schema, app: app) }) { h in
            try await Self.cleaningUp(app, h.client) {
                try await Self.seedNight(h, app: app)
                let db = h.db.with(users: try await h.db.checkUsers(requiring: []))
                #expect(
                    db.users
                        == UsersRelation(
                            isTable: false, optionalColumns: ["stripe_customer_id", "google_purchase_token"],
                            identifierColumns: StoreRegistry.identifierColumns))
                let config = try SubreconConfiguration.load(h.env, requireSource: true)
                let stats = RequestStats()
                let result = try await HTTPClientScope.with { http in
                    let real = try StoreFactSource(configuration: config, httpClient: http, stats: stats, logger: h.logger)
                    let source = AppWriteDuringFetch(inner: real, userID: Self.downgraded, app: app, client: h.client)
                    let job = ReconcileJob(
                        ports: JobPorts(postgres: db), source: source, stats: stats, sourcesNote: real.notes, logger: h.logger)
                    return try await job.run(h.options(), runID: "run-own-concurrent")
                }
                let rows = try h.report(result)
                #expect(rows[Self.downgraded]?.drift.contains("concurrent_update") == true)
                #expect(rows[Self.downgraded]?.applied == false)
                #expect(rows[Self.extended]?.applied == true && rows[Self.restored]?.applied == true)
                #expect(result.summary.concurrentUpdates == 1)
                let profiles = try await Self.profiles(h.client, app: app)
                #expect(profiles[Self.downgraded]?.plan == "monthly", "the app's write survives")
                #expect(profiles[Self.downgraded]?.expires == Harness.day(30))
                #expect(try await h.auditRows(Self.downgraded) == 0)
                #expect(try await h.intents(Self.downgraded) == 0)
            }
        }
    }

    @Test("through the Supabase view, an app row held by an open transaction is skipped, never waited for (concurrent_update)")
    func supabaseHeldRow() async throws {
        let app = Self.appSchemaName()
        try await Harness.with(setUp: { schema in try await Self.loadExample(schema, app: app) }) { h in
            try await Self.cleaningUp(app, h.client) {
                try await Self.seedNight(h, app: app)
                let before = try await Self.profiles(h.client, app: app)
                // The app's webhook holds the extended user's StoreKit row for the whole run: the view's trigger finds it
                // with SKIP LOCKED and leaves it (the view itself cannot be locked through its outer joins).
                let result = try await h.client.withConnection { holder in
                    try await holder.query("begin", logger: h.logger)
                    try await holder.query(
                        PostgresQuery(
                            unsafeSQL: "select 1 from \(app).ios_subscriptions where user_id = '\(Self.extended)' for update"),
                        logger: h.logger)
                    let result = try await h.run()
                    try await holder.query("rollback", logger: h.logger)
                    return result
                }
                #expect(result.exitStatus == .ok)
                let rows = try h.report(result)
                #expect(rows[Self.extended]?.drift.contains("concurrent_update") == true && rows[Self.extended]?.applied == false)
                #expect(rows[Self.downgraded]?.applied == true && rows[Self.restored]?.applied == true)
                let after = try await Self.profiles(h.client, app: app)
                #expect(after[Self.extended] == before[Self.extended], "the held user is untouched")
                #expect(try await h.auditRows(Self.extended) == 0)
                #expect(try await h.count("select count(*)::int from reconcile_changes") == 2)
            }
        }
    }

    // MARK: Helpers

    static let logger = Logger(label: "subrecon.integration.own-tables")
    static let downgraded = "00000000-0000-4000-8000-00000000000d"
    static let restored = "00000000-0000-4000-8000-00000000000e"
    static let extended = "00000000-0000-4000-8000-00000000000f"

    /// An app's users table with every contract column and an app column, without the store identifiers.
    static let appUsersTable = """
        create table users (id text primary key, email text, current_tier integer not null default 0, \
        subscription_status text not null default 'none', subscription_end_date timestamptz, grace_period_ends_at timestamptz, \
        subscription_source text, iap_product_id text, iap_original_transaction_id text, auto_renew boolean, \
        updated_at timestamptz not null default now())
        """

    static func appSchemaName() -> String {
        "app_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(16)
    }

    /// Loads the shipped example as is, with `public` → `app` and `subrecon` → the test's schema.
    static func loadExample(_ schema: TestSchema, app: String) async throws {
        let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("docs/supabase-users-view.sql")
        var script = try String(contentsOf: file, encoding: .utf8)
        script = script.replacingOccurrences(of: #"\bpublic\b"#, with: app, options: .regularExpression)
        script = script.replacingOccurrences(of: #"\bsubrecon\b"#, with: schema.name, options: .regularExpression)
        try await schema.client.query(PostgresQuery(unsafeSQL: "create schema \(app)"))
        for statement in TestDatabase.statements(ofScript: script) {
            try await schema.client.query(PostgresQuery(unsafeSQL: statement))
        }
    }

    /// Runs `body`, then drops the app's schema (the view over it goes with it).
    static func cleaningUp(_ app: String, _ client: PostgresClient, _ body: () async throws -> Void) async throws {
        do {
            try await body()
        } catch {
            _ = try? await client.query(PostgresQuery(unsafeSQL: "drop schema \(app) cascade"))
            throw error
        }
        try await client.query(PostgresQuery(unsafeSQL: "drop schema \(app) cascade"))
    }

    /// Three iOS users in the app's tables and at RevenueCat: one lapsed (downgrade), one free again but renewed
    /// (restore), one annual renewed (extend).
    static func seedNight(_ h: Harness, app: String) async throws {
        let old = Harness.day(-40)
        let seeds: [(id: String, plan: String, expires: Double, txn: String, product: String)] = [
            (downgraded, "monthly", -2, "2000000001", "premium_monthly"),
            (restored, "free", -5, "2000000002", "premium_monthly"),
            (extended, "annual", -1, "2000000003", "pro_monthly"),
        ]
        for seed in seeds {
            try await h.client.query(
                PostgresQuery(
                    unsafeSQL: """
                        insert into \(app).profiles (id, display_name, subscription, subscription_expires_at, updated_at) \
                        values ($1::uuid, 'user', $2::text::\(app).subscription_plan, $3, $4)
                        """, binds: try Self.binds(seed.id, seed.plan, Harness.day(seed.expires), old)))
            try await h.client.query(
                PostgresQuery(
                    unsafeSQL: """
                        insert into \(app).ios_subscriptions (user_id, original_transaction_id, product_id, expires_at, auto_renew, updated_at) \
                        values ($1::uuid, $2, $3, $4, true, $5)
                        """, binds: try Self.binds(seed.id, seed.txn, seed.product, Harness.day(seed.expires), old)))
        }
        let history = Harness.day(-300)
        await h.revenueCat.setSubscriber(
            .init(firstSeen: history, subscriptions: [Harness.subscription(expires: -2, txn: "2000000001")]), for: downgraded)
        await h.revenueCat.setSubscriber(
            .init(firstSeen: history, subscriptions: [Harness.subscription(purchased: -5, expires: 25, txn: "2000000002")]),
            for: restored)
        await h.revenueCat.setSubscriber(
            .init(firstSeen: history, subscriptions: [Harness.subscription("pro_monthly", purchased: -1, expires: 29, txn: "2000000003")]),
            for: extended)
    }

    static func binds(_ values: any PostgresDynamicTypeEncodable...) throws -> PostgresBindings {
        var binds = PostgresBindings()
        for value in values { binds.append(value) }
        return binds
    }

    struct Profile: Equatable {
        var plan: String
        var expires: Date?
        var updatedAt: Date
    }

    static func profiles(_ client: PostgresClient, app: String) async throws -> [String: Profile] {
        var result: [String: Profile] = [:]
        let rows = try await client.query(
            PostgresQuery(unsafeSQL: "select id::text, subscription::text, subscription_expires_at, updated_at from \(app).profiles"))
        for try await (id, plan, expires, updatedAt) in rows.decode((String, String, Date?, Date).self) {
            result[id] = Profile(plan: plan, expires: expires, updatedAt: updatedAt)
        }
        return result
    }

    /// Columns and indexes of an app table (what an alter or create index would change).
    static func shape(_ client: PostgresClient, _ table: String) async throws -> String? {
        try await TestDatabase.scalar(
            client,
            PostgresQuery(
                unsafeSQL: """
                    select string_agg(attname || ' ' || format_type(atttypid, atttypmod), ', ' order by attnum) \
                    || ' | ' || (select count(*) from pg_index where indrelid = '\(table)'::regclass)::text \
                    from pg_attribute where attrelid = '\(table)'::regclass and attnum > 0 and not attisdropped
                    """), as: String.self)
    }

    /// The exit status and line a command's failure maps to (the executable's one map).
    static func failure(_ body: () async throws -> Void) async throws -> (SubreconCore.ExitStatus, String) {
        do {
            try await body()
        } catch {
            let (status, line) = ExitStatus.failure(error)
            return (status, line)
        }
        Issue.record("the command did not fail")
        return (SubreconCore.ExitStatus.ok, "")
    }
}

/// The app's webhook renews the user in its own tables while the job is asking RevenueCat: its write must win.
struct AppWriteDuringFetch: FactSource {
    let inner: StoreFactSource
    let userID: String
    let app: String
    let client: PostgresClient

    func facts(for row: UserRow) async -> SourceFacts {
        if row.id == userID {
            _ = try? await client.query(
                PostgresQuery(
                    unsafeSQL: """
                        update \(app).profiles set subscription_expires_at = $1, updated_at = now() where id = $2::uuid
                        """, binds: (try? OwnTablesTests.binds(Harness.day(30), userID)) ?? PostgresBindings()))
        }
        return await inner.facts(for: row)
    }
}
