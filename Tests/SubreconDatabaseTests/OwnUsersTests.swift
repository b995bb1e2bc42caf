import Foundation
import Logging
import PostgresNIO
import SubreconCore
import SubreconDatabase
import SubreconPorts
import SubreconTestKit
import SubreconTestSupport
import Testing

/// An app's own `users` (CONTRACT "Database"): ownership, the contract check, optional columns, migrations that leave the
/// app's relation alone.
@Suite("An app's own users (real PostgreSQL)", .serialized, .enabled(if: TestDatabase.isEnabled, TestDatabase.skipMessage))
struct OwnUsersTests {
    /// The app's table: every contract column (status as varchar), extra app columns, no store identifiers.
    static let appTable = """
        create table users (
            id text primary key, email text not null, current_tier integer not null default 0,
            subscription_status varchar(32) not null default 'none', subscription_end_date timestamptz,
            grace_period_ends_at timestamptz, subscription_source text, iap_product_id text,
            iap_original_transaction_id text, auto_renew boolean, updated_at timestamptz not null default now(),
            marketing_opt_in boolean not null default false)
        """

    /// Every column of `users` (name, type, not null, default) and its indexes: what an `alter` or `create index`
    /// would change.
    static func shape(_ client: PostgresClient) async throws -> String {
        let columns = try await TestDatabase.scalar(
            client,
            """
            select string_agg(a.attname || ' ' || format_type(a.atttypid, a.atttypmod) || ' ' || a.attnotnull::text || ' ' \
            || coalesce(pg_get_expr(d.adbin, d.adrelid), '-'), ', ' order by a.attnum) \
            from pg_attribute a left join pg_attrdef d on d.adrelid = a.attrelid and d.adnum = a.attnum \
            where a.attrelid = 'users'::regclass and a.attnum > 0 and not a.attisdropped
            """, as: String.self)
        let indexes = try await TestDatabase.scalar(
            client,
            "select coalesce(string_agg(indexrelid::regclass::text, ',' order by indexrelid::regclass::text), '') from pg_index where indrelid = 'users'::regclass",
            as: String.self)
        return "\(columns ?? "?") | indexes: \(indexes ?? "?")"
    }

    static func exists(_ client: PostgresClient, _ table: String) async throws -> Bool {
        try await TestDatabase.scalar(client, "select to_regclass(\(table)) is not null", as: Bool.self) ?? false
    }

    @Test("migrate next to the app's users table creates subrecon's tables, never alters or indexes users, and is a no-op the second time")
    func appTableUntouched() async throws {
        try await TestDatabase.withDatabase(migrated: false) { db, client in
            try await client.query(PostgresQuery(unsafeSQL: Self.appTable))
            let before = try await Self.shape(client)
            #expect(try await db.migrate() == SchemaMigrator.migrations.map(\.version))
            #expect(try await Self.shape(client) == before, "no column added, no index created on the app's table")
            for table in ["product_tiers", "push_intents", "reconcile_runs", "reconcile_changes", "reconcile_verdicts", "apple_receipts"] {
                #expect(try await Self.exists(client, table), "\(table)")
            }
            let owner = try await TestDatabase.scalar(
                client, "select value from subrecon_settings where key = 'users_owner'", as: String.self)
            #expect(owner == "app")
            #expect(try await db.migrate() == [])
            #expect(try await Self.shape(client) == before)

            // The run's view of it: a table (rows lockable) without the optional store columns, read with nulls.
            let relation = try await db.checkUsers(requiring: [])
            #expect(relation == UsersRelation(isTable: true, optionalColumns: [], identifierColumns: IdentifierColumn.testColumns))
            try await client.query(
                """
                insert into users (id, email, current_tier, subscription_status, subscription_end_date, subscription_source, \
                iap_product_id, auto_renew) values ('u-1', 'a@example.com', 1, 'active', \(Fixture.day(-2)), 'apple_iap', 'premium', true)
                """)
            let reader = db.with(users: relation)
            let page = try await reader.candidates.candidatePage(CandidateQuery(asOf: Fixture.asOf), after: nil, limit: 10)
            #expect(page.map(\.id) == ["u-1"])
            #expect(page.first?.identifiers.isEmpty == true)
            #expect(try await reader.user(id: "u-1")?.currentTier == 1)
            await #expect(throws: (any Error).self, "the full column list fails on the app's table: hence the detection") {
                _ = try await db.user(id: "u-1")
            }
        }
    }

    @Test("a missing column, wrong types and a configured source's column are one violation naming them all; nothing is created")
    func contractViolation() async throws {
        try await TestDatabase.withDatabase(migrated: false) { db, client in
            try await client.query(
                """
                create table users (id text primary key, current_tier text, subscription_status text, \
                subscription_end_date timestamp, grace_period_ends_at timestamptz, iap_product_id text, \
                iap_original_transaction_id text, auto_renew boolean, updated_at timestamptz not null default now())
                """)
            let schema = try #require(try await TestDatabase.scalar(client, "select current_schema()::text", as: String.self))
            do {
                try await db.migrate(requiring: ["stripe_customer_id"])
                Issue.record("migrate accepted a users without subscription_source")
            } catch let violation as UsersContract.Violation {
                #expect(violation.missing == ["subscription_source (text)", "stripe_customer_id (text)"])
                #expect(
                    violation.wrongType == [
                        "current_tier of type text (needs integer)",
                        "subscription_end_date of type timestamp without time zone (needs timestamptz)",
                    ])
                #expect(
                    violation.description
                        == "configuration error: users (\(schema).users, a table) is missing subscription_source (text), "
                        + "stripe_customer_id (text); has current_tier of type text (needs integer), subscription_end_date of "
                        + "type timestamp without time zone (needs timestamptz) (CONTRACT 'Database': fix the relation, or the view "
                        + "subrecon reads; nothing was changed)")
                #expect(!violation.description.contains("\n"))
            }
            for table in ["subrecon_schema_migrations", "subrecon_settings", "product_tiers", "reconcile_runs"] {
                #expect(try await !Self.exists(client, table), "\(table) must not be created")
            }
            await #expect(throws: UsersContract.Violation.self) { try await db.checkUsers(requiring: []) }
        }
    }

    @Test("a view over the app's tables: not lockable, optional columns required only when their source is configured")
    func viewRelation() async throws {
        try await TestDatabase.withDatabase(migrated: false) { db, client in
            try await client.query(
                """
                create table app_profiles (id text primary key, tier integer not null default 0, status text not null default 'none', \
                ends timestamptz, grace timestamptz, source text, product text, original text, renews boolean, \
                changed timestamptz not null default now(), stripe_customer integer)
                """)
            try await client.query(
                """
                create view users as select id, tier as current_tier, status as subscription_status, ends as subscription_end_date, \
                grace as grace_period_ends_at, source as subscription_source, product as iap_product_id, \
                original as iap_original_transaction_id, renews as auto_renew, changed as updated_at, \
                stripe_customer as stripe_customer_id from app_profiles
                """)
            #expect(try await db.migrate() == SchemaMigrator.migrations.map(\.version))
            #expect(try await Self.exists(client, "reconcile_runs"))
            // stripe_customer_id is there but an integer: without Stripe it is read as null, with Stripe it is a 78.
            #expect(
                try await db.checkUsers(requiring: [])
                    == UsersRelation(isTable: false, optionalColumns: [], identifierColumns: IdentifierColumn.testColumns))
            do {
                _ = try await db.checkUsers(requiring: ["stripe_customer_id", "google_purchase_token"])
                Issue.record("accepted an integer stripe_customer_id with Stripe configured")
            } catch let violation as UsersContract.Violation {
                #expect(violation.missing == ["google_purchase_token (text)"])
                #expect(violation.wrongType == ["stripe_customer_id of type integer (needs text)"])
                #expect(violation.relation.hasSuffix(".users, a view"))
            }
        }
    }

    @Test("a database migrated before ownership was recorded keeps treating users as subrecon's")
    func legacyOwnership() async throws {
        try await TestDatabase.withDatabase { db, client in
            let owner = try await TestDatabase.scalar(
                client, "select value from subrecon_settings where key = 'users_owner'", as: String.self)
            #expect(owner == "subrecon")
            #expect(
                try await db.checkUsers(requiring: ["stripe_customer_id", "google_purchase_token"])
                    == .subreconTable(IdentifierColumn.testColumns))
            try await client.query("drop table subrecon_settings")
            var migrations = SchemaMigrator.migrations
            let next = SchemaMigrator().latestVersion + 1
            migrations.append(
                SchemaMigration(version: next, name: "test", ownUsersStatements: ["alter table users add column note text"], statements: [])
            )
            #expect(try await db.migrate(SchemaMigrator(migrations: migrations)) == [next])
            let column = try await TestDatabase.scalar(
                client,
                "select count(*)::int from pg_attribute where attrelid = 'users'::regclass and attname = 'note'",
                as: Int.self)
            #expect(column == 1)
        }
    }

    @Test("an app's users in a later search_path schema is not hidden behind a new subrecon table: migrate refuses")
    func shadowedUsers() async throws {
        try await TestDatabase.withSchema { schema in
            let later = schema.name + "_app"
            try await schema.client.query(PostgresQuery(unsafeSQL: "create schema \(later)"))
            do {
                try await schema.client.query(
                    PostgresQuery(
                        unsafeSQL: Self.appTable.replacingOccurrences(of: "create table users", with: "create table \(later).users")))
                let settings = try TestDatabase.settings(schema: "\(schema.name),\(later)")
                let client = PostgresClient(configuration: settings.clientConfiguration(maximumConnections: 1, direct: true))
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask { await client.run() }
                    defer { group.cancelAll() }
                    let db = SubscriptionDatabase(
                        client: client, logger: Logger(label: "subrecon.tests.store"), identifierColumns: IdentifierColumn.testColumns)
                    do {
                        try await db.migrate()
                        Issue.record("migrate created a users in front of the app's")
                    } catch let violation as UsersContract.Violation {
                        #expect(violation.shadowed && violation.relation == "\(later).users, a table")
                        #expect(violation.description.contains("is not in the first schema of search_path"))
                    }
                }
                #expect(try await !Self.exists(schema.client, "\(schema.name).reconcile_runs"))
                #expect(try await !Self.exists(schema.client, "\(schema.name).users"))
            } catch {
                _ = try? await schema.client.query(PostgresQuery(unsafeSQL: "drop schema \(later) cascade"))
                throw error
            }
            try await schema.client.query(PostgresQuery(unsafeSQL: "drop schema \(later) cascade"))
        }
    }

    @Test("the script splitter keeps $$ bodies, quotes and drops comments")
    func scriptSplitter() {
        let script = """
            -- a comment; with a semicolon and the app's quote
            create table t (a text default 'x;y');
            create function f() returns int language plpgsql as $$ begin -- it's fine; really
            return 1; end $$;
            """
        let statements = TestDatabase.statements(ofScript: script)
        #expect(statements.count == 2)
        #expect(statements[0] == "create table t (a text default 'x;y')")
        #expect(statements[1].hasSuffix("return 1; end $$"))
    }
}
