import Foundation
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

/// An app's `users` view exposing a NULL where the contract says not null is that user's
/// `row_error`, never the night's; a `users` that cannot be updated is exit 78 before any source is asked.
@Suite("One bad row, an unwritable users", .serialized, .enabled(if: Harness.isEnabled, Harness.skip), .timeLimit(.minutes(3)))
struct UnreadableRowTests {
    /// The app's table, with nullable contract columns, behind a simple (automatically updatable) view `users`.
    static let baseTable = """
        create table users_base (id text primary key, current_tier integer, subscription_status text, \
        subscription_end_date timestamptz, grace_period_ends_at timestamptz, subscription_source text, iap_product_id text, \
        iap_original_transaction_id text, auto_renew boolean, updated_at timestamptz not null default now(), \
        stripe_customer_id text, google_purchase_token text)
        """
    static let simpleView = "create view users as select * from users_base"

    static func setUp(_ schema: TestSchema) async throws {
        try await schema.client.query(PostgresQuery(unsafeSQL: baseTable))
        try await schema.client.query(PostgresQuery(unsafeSQL: simpleView))
    }

    /// Good users `a-00`...`a-05` (even lapsed, odd renewed), and two rows the view exposes with a NULL:
    /// `z-bad-status` (tier 1, lapsed, status NULL) and `z-bad-tier` (tier NULL, billing issue).
    func seed(_ h: Harness) async throws -> [String] {
        let good = try await h.seedChanging(prefix: "a", count: 6)
        try await h.client.query(
            """
            insert into users_base (id, current_tier, subscription_status, subscription_end_date, subscription_source, updated_at) values \
            ('z-bad-status', 1, null, '2026-05-30T03:00:00Z', 'apple_iap', '2026-05-01T00:00:00Z'), \
            ('z-bad-tier', null, 'billing_issue', '2026-05-30T03:00:00Z', 'apple_iap', '2026-05-01T00:00:00Z')
            """)
        for id in ["z-bad-status", "z-bad-tier"] {
            await h.revenueCat.setSubscriber(
                SimulatedSubscriber(firstSeen: Harness.day(-300), subscriptions: [Harness.subscription(expires: -2)]), for: id)
        }
        return good
    }

    /// The bad rows exactly as seeded.
    func badRowsUntouched(_ h: Harness) async throws -> Bool {
        try await h.count(
            """
            select count(*)::int from users_base where updated_at = '2026-05-01T00:00:00Z' and \
            ((id = 'z-bad-status' and current_tier = 1 and subscription_status is null) or \
            (id = 'z-bad-tier' and current_tier is null and subscription_status = 'billing_issue'))
            """) == 2
    }

    @Test("a NULL current_tier or subscription_status through the app's view is that user's row_error; the others are reconciled (exit 1)")
    func nullThroughView() async throws {
        try await Harness.with(setUp: Self.setUp) { h in
            let good = try await seed(h)
            let result = try await h.run()
            #expect(result.exitStatus == .userErrors)
            let rows = try h.report(result)
            for (id, column) in [("z-bad-status", "subscription_status"), ("z-bad-tier", "current_tier")] {
                let row = try #require(rows[id])
                #expect(row.drift == ["row_error"] && row.action == "skipped" && !row.applied)
                #expect(row.error?.contains("users.\(column) is NULL") == true, "\(row.error ?? "")")
            }
            #expect(try await badRowsUntouched(h))
            let asked = await h.revenueCat.counters().requestsPerUser
            #expect(asked["z-bad-status"] == nil && asked["z-bad-tier"] == nil, "no source asked about an unreadable row")
            for (n, id) in good.enumerated() {
                #expect(rows[id]?.action == (n % 2 == 0 ? "downgrade" : "extend") && rows[id]?.applied == true)
            }
            #expect(result.summary.errors == 2 && result.summary.drift["row_error"] == 2)
            let csv = try h.csvLines(result, "drift.csv")
            #expect(csv.contains { $0.contains("z-bad-status") && $0.contains("row_error") && $0.contains("skipped") })

            // --users-file and the backfill scan read the same rows the same way.
            let named = try await h.run { $0.userIDs = ["z-bad-tier", good[0]] }
            #expect(named.exitStatus == .userErrors)
            #expect(try h.report(named)["z-bad-tier"]?.drift == ["row_error"])
            let backfill = try await h.run { $0.mode = .backfill }
            #expect(backfill.exitStatus == .userErrors)
            #expect(try h.report(backfill)["z-bad-status"]?.drift == ["row_error"])
            #expect(try await badRowsUntouched(h))

            // explain prints the row error and exits 1, asking nobody.
            let (status, line) = try await OwnTablesTests.failure {
                _ = try await Commands.explain(environment: h.env, userID: "z-bad-tier", asOf: Harness.asOf, logger: h.logger)
            }
            #expect(status == .userErrors && line.contains("row_error") && line.contains("users.current_tier is NULL"))
            #expect(await h.revenueCat.counters().requestsPerUser["z-bad-tier"] == nil)
        }
    }

    @Test("--resume of a stopped run reads the unreadable rows as row_error and finishes (exit 1)")
    func resumeSurvives() async throws {
        try await Harness.with(setUp: Self.setUp) { h in
            let good = try await seed(h)
            let stop = StopSignal()
            stop.stop(reason: "test stop before any user")
            let (status, line) = try await OwnTablesTests.failure { _ = try await h.run { $0.stop = stop } }
            #expect(status == .stopped && line.contains("--resume"), "\(line)")
            let runID = try #require(try await Self.onlyRunID(h))
            let resumed = try await Commands.run(environment: h.env, options: h.options(), logger: h.logger, resume: runID)
            #expect(resumed.exitStatus == .userErrors)
            let rows = try h.report(resumed)
            #expect(rows["z-bad-status"]?.drift == ["row_error"] && rows["z-bad-tier"]?.drift == ["row_error"])
            for id in good { #expect(rows[id]?.applied == true) }
            #expect(try await badRowsUntouched(h))
        }
    }

    @Test("a users view with a join and no INSTEAD OF UPDATE trigger: migrate and run exit 78 naming it, no source asked")
    func unwritableView() async throws {
        try await Harness.with(setUp: Self.setUp) { h in
            _ = try await h.seedChanging(prefix: "w", count: 2)
            try await h.client.query("drop view users")
            try await h.client.query("create view users as select b.* from users_base b join users_base c on c.id = b.id")
            let (runStatus, runLine) = try await OwnTablesTests.failure { _ = try await h.run() }
            #expect(runStatus == .config)
            #expect(runLine.contains(".users, a view) cannot be updated"), "\(runLine)")
            #expect(!runLine.contains("\n"))
            #expect(await h.revenueCat.counters().totalRequests == 0)
            #expect(try await h.count("select count(*)::int from reconcile_runs") == 0)
            let (migrateStatus, migrateLine) = try await OwnTablesTests.failure {
                _ = try await Commands.migrate(environment: h.env, logger: h.logger)
            }
            #expect(migrateStatus == .config && migrateLine == runLine)

            // The same view with an INSTEAD OF UPDATE trigger is accepted.
            try await h.client.query(
                """
                create function users_update() returns trigger language plpgsql as $$ begin \
                update users_base set current_tier = new.current_tier, subscription_status = new.subscription_status, \
                subscription_end_date = new.subscription_end_date, grace_period_ends_at = new.grace_period_ends_at, \
                subscription_source = new.subscription_source, iap_product_id = new.iap_product_id, \
                iap_original_transaction_id = new.iap_original_transaction_id, auto_renew = new.auto_renew, \
                updated_at = new.updated_at where id = old.id; return new; end $$
                """)
            try await h.client.query("create trigger users_update instead of update on users for each row execute function users_update()")
            #expect(try await Commands.migrate(environment: h.env, logger: h.logger) == .ok)
            let result = try await h.run()
            #expect(result.exitStatus == .ok && result.summary.applied == 2)
        }
    }

    static func onlyRunID(_ h: Harness) async throws -> String? {
        for try await id in try await h.client.query("select id from reconcile_runs").decode(String.self) { return id }
        return nil
    }
}
