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

/// The databases operators run (docs/CONTRACT.md, "What run checks first"): a stock PgBouncer in front, a schema
/// the session is not really in, a read-only database, a role with exactly the grants in question, row-level
/// security per the repository's own Supabase recipe. Each role is created here with only what the test names.
@Suite("The operator's database", .serialized, .enabled(if: Harness.isEnabled, Harness.skip), .timeLimit(.minutes(5)))
struct OperatorDatabaseTests {
    static let environment = ProcessInfo.processInfo.environment
    static let sessionPooler = environment["SUBRECON_TEST_PGBOUNCER_SESSION_URL"].flatMap { $0.isEmpty ? nil : $0 }

    // MARK: Poolers and the schema

    @Test(
        "a full run through a stock PgBouncer in session mode equals a direct run",
        .enabled(
            if: sessionPooler != nil,
            "SUBRECON_TEST_PGBOUNCER_SESSION_URL is not set: scripts/test starts a PgBouncer when pgbouncer is installed"))
    func sessionPoolerRun() async throws {
        let direct = try await Self.night(pooler: nil)
        let pooled = try await Self.night(pooler: Self.sessionPooler)
        #expect(direct.exit == .ok && pooled.exit == .ok)
        #expect(direct.rows.count == 6)
        #expect(pooled.rows == direct.rows)
        #expect(pooled.users == direct.users)
        #expect(pooled.audits == direct.audits && direct.audits == 6)
    }

    /// One night over the same seeded users, directly or through `pooler` (its URL, the schema added).
    static func night(pooler: String?) async throws -> (exit: SubreconCore.ExitStatus, rows: [String], users: [String], audits: Int) {
        var outcome: (SubreconCore.ExitStatus, [String], [String], Int)?
        try await Harness.with { h in
            let ids = try await h.seedChanging(prefix: "pool")
            var env = h.env
            if let pooler {
                env.values["DATABASE_URL"] = pooler + "&search_path=" + Self.schema(of: h)
            }
            let result = try await Commands.run(environment: env, options: h.options(), logger: h.logger)
            let report = try h.report(result)
            let rows = ids.map { id in
                let row = report[id]
                return "\(id) \(row?.action ?? "-") \(row?.drift.joined(separator: ";") ?? "-") \(row?.applied ?? false)"
            }
            var users: [String] = []
            for id in ids {
                let row = try await h.user(id)
                users.append(
                    "\(id) \(row?.currentTier ?? -1) \(row?.statusText ?? "-") \(row.flatMap(\.endDate).map(ISO8601.string) ?? "-")")
            }
            outcome = (result.exitStatus, rows, users, try await h.count("select count(*)::int from reconcile_changes"))
        }
        let (exit, rows, users, audits) = try #require(outcome)
        return (exit, rows, users, audits)
    }

    @Test(
        "a search_path naming a schema that does not exist: 78 naming both schemas, never 'run migrate'; migrate creates nothing in public")
    func schemaNotCurrent() async throws {
        try await Harness.with { h in
            let publicTables = try await h.count("select count(*)::int from pg_tables where schemaname = 'public'")
            var env = h.env
            let missing = "nowhere_" + Self.schema(of: h).suffix(8)
            env.values["DATABASE_URL"] = try Self.baseURL() + "&search_path=\(missing)"
            let (migrateStatus, migrateLine) = try await OwnTablesTests.failure {
                _ = try await Commands.migrate(environment: env, logger: h.logger)
            }
            #expect(migrateStatus == .config)
            #expect(migrateLine.contains("'\(missing)'") && migrateLine.contains("current schema is none"))
            #expect(!migrateLine.contains("migrate` first"))
            #expect(try await h.count("select count(*)::int from pg_tables where schemaname = 'public'") == publicTables)
            let (runStatus, runLine) = try await OwnTablesTests.failure {
                _ = try await Commands.run(environment: env, options: h.options(), logger: h.logger)
            }
            #expect(runStatus == .config)
            #expect(runLine.contains("'\(missing)'") && !runLine.contains("migrate` first"))
            #expect(await h.revenueCat.counters().totalRequests == 0)
        }
    }

    // MARK: Read-only databases

    @Test("a read-only database: a run that applies exits 69 naming it before a run is recorded; a dry run works")
    func readOnly() async throws {
        try await Harness.with { h in
            _ = try await h.seedChanging(prefix: "ro", count: 2)
            try await Self.withRole(h, grants: ["alter role {role} superuser", "alter role {role} set default_transaction_read_only = on"])
            {
                env in
                let (status, line) = try await OwnTablesTests.failure {
                    _ = try await Commands.run(environment: env, options: h.options(), logger: h.logger)
                }
                #expect(status == .unavailable)
                #expect(line.contains("read-only") && line.contains("default_transaction_read_only"))
                #expect(!line.contains("--resume"))
                #expect(try await h.count("select count(*)::int from reconcile_runs") == 0)
                #expect(await h.revenueCat.counters().totalRequests == 0)
                let dry = try await Commands.run(environment: env, options: h.options { $0.dryRun = true }, logger: h.logger)
                #expect(dry.exitStatus == .ok)
                #expect(dry.summary.candidates == 2)
            }
        }
    }

    // MARK: Least privilege

    @Test("a role without UPDATE on users: 78 naming the relation and the privilege before any store is asked")
    func noUpdateOnUsers() async throws {
        try await Harness.with { h in
            _ = try await h.seedChanging(prefix: "np", count: 2)
            try await Self.withRole(h, grants: Self.jobGrants + ["revoke update on {schema}.users from {role}"]) { env in
                let (status, line) = try await OwnTablesTests.failure {
                    _ = try await Commands.run(environment: env, options: h.options(), logger: h.logger)
                }
                #expect(status == .config)
                #expect(line.contains("UPDATE on") && line.contains("users"))
                #expect(await h.revenueCat.counters().totalRequests == 0)
                #expect(try await h.count("select count(*)::int from reconcile_runs") == 0)
                // A dry run writes nothing: it needs no UPDATE.
                let dry = try await Commands.run(environment: env, options: h.options { $0.dryRun = true }, logger: h.logger)
                #expect(dry.exitStatus == .ok)
            }
        }
    }

    @Test("a role that cannot write the job's own tables: 78 naming them before any store is asked")
    func noInsertOnOwnTables() async throws {
        try await Harness.with { h in
            _ = try await h.seedChanging(prefix: "nt", count: 2)
            try await Self.withRole(h, grants: Self.jobGrants + ["revoke insert on {schema}.reconcile_runs from {role}"]) { env in
                let (status, line) = try await OwnTablesTests.failure {
                    _ = try await Commands.run(environment: env, options: h.options(), logger: h.logger)
                }
                #expect(status == .config)
                #expect(line.contains("INSERT on") && line.contains("reconcile_runs"))
                #expect(await h.revenueCat.counters().totalRequests == 0)
            }
        }
    }

    @Test("migrate on a current schema needs no privilege beyond reading it: exit 0; unreadable: 78 naming the privilege, never 75")
    func migrateCurrentSchema() async throws {
        try await Harness.with { h in
            try await Self.withRole(
                h, grants: ["grant usage on schema {schema} to {role}", "grant select on all tables in schema {schema} to {role}"]
            ) { env in
                let status = try await Commands.migrate(environment: env, logger: h.logger)
                #expect(status == .ok)
            }
            try await Self.withRole(h, grants: ["grant usage on schema {schema} to {role}"]) { env in
                let (status, line) = try await OwnTablesTests.failure {
                    _ = try await Commands.migrate(environment: env, logger: h.logger)
                }
                #expect(status == .config)
                #expect(line.contains("permission denied") && line.contains("subrecon_schema_migrations"))
            }
            // No USAGE on the schema: the session is in no schema at all, 78 naming it.
            try await Self.withRole(h, grants: []) { env in
                let (status, line) = try await OwnTablesTests.failure {
                    _ = try await Commands.migrate(environment: env, logger: h.logger)
                }
                #expect(status == .config)
                #expect(line.contains("lacks USAGE"))
            }
        }
    }

    // MARK: Row-level security

    @Test(
        "the Supabase recipe with RLS on the app's tables and no policy for the job's role: 78 naming RLS; with the README's policy the night applies"
    )
    func supabaseRowSecurity() async throws {
        let app = OwnTablesTests.appSchemaName()
        try await Harness.with(setUp: { schema in try await OwnTablesTests.loadExample(schema, app: app) }) { h in
            try await OwnTablesTests.cleaningUp(app, h.client) {
                try await OwnTablesTests.seedNight(h, app: app)
                try await h.client.query(PostgresQuery(unsafeSQL: "alter table \(app).profiles enable row level security"))
                try await h.client.query(PostgresQuery(unsafeSQL: "alter table \(app).ios_subscriptions enable row level security"))
                let grants = Self.supabaseGrants(app: app)
                try await Self.withRole(h, grants: grants) { env in
                    let (status, line) = try await OwnTablesTests.failure {
                        _ = try await Commands.run(environment: env, options: h.options(), logger: h.logger)
                    }
                    #expect(status == .config)
                    #expect(line.contains("row-level security on \(app).profiles") && line.contains("policy"))
                    #expect(line.contains("\(app).ios_subscriptions"))
                    #expect(await h.revenueCat.counters().totalRequests == 0)
                    #expect(try await h.count("select count(*)::int from reconcile_runs") == 0)
                }
                // The README's policy for the job's role.
                try await Self.withRole(
                    h,
                    grants: grants + [
                        "create policy subrecon_job on \(app).profiles for all to {role} using (true) with check (true)",
                        "create policy subrecon_job on \(app).ios_subscriptions for all to {role} using (true) with check (true)",
                    ]
                ) { env in
                    let result = try await Commands.run(environment: env, options: h.options(), logger: h.logger)
                    #expect(result.exitStatus == .ok)
                    #expect(result.summary.applied == 3)
                    #expect(result.summary.concurrentUpdates == 0)
                }
            }
        }
    }

    @Test(
        "RLS (narrowed after run checked) that lets the role read a row but its update touch nothing: each such user is an error naming RLS (exit 1), never concurrent_update"
    )
    func rowSecurityRefusesAtApply() async throws {
        try await Harness.with { h in
            let ids = try await h.seedChanging(prefix: "rls", count: 4)
            try await h.client.query("alter table users enable row level security")
            let grants =
                Self.jobGrants + [
                    "create policy job_read on {schema}.users for select to {role} using (true)",
                    // An UPDATE policy exists, but admits only the first two users.
                    "create policy job_write on {schema}.users for update to {role} using (id in ('\(ids[0])', '\(ids[1])'))",
                ]
            try await Self.withRole(h, grants: grants) { env in
                // `run` refuses such a policy before it starts (PreflightProofTests); the job itself meets one that
                // narrowed after that check (docs/CONTRACT.md, "What run checks first", "Applying").
                let result = try await PreflightProofTests.night(h, env: env, statements: [])
                #expect(result.exitStatus == .userErrors)
                #expect(result.summary.applied == 2)
                #expect(result.summary.concurrentUpdates == 0)
                #expect(result.summary.errors == 2)
                let rows = try h.report(result)
                for id in ids[2...] {
                    #expect(rows[id]?.drift.contains("write_refused") == true)
                    #expect(rows[id]?.drift.contains("concurrent_update") == false)
                    #expect(rows[id]?.error?.contains("row-level security") == true)
                    #expect(rows[id]?.applied == false)
                }
            }
            try await h.client.query("alter table users disable row level security")
        }
    }

    @Test(
        "RLS whose UPDATE policy admits some rows and a webhook holding an admitted row while the job applies: that user is concurrent_update, the rows the policy refuses write_refused"
    )
    func rowSecurityAndAHeldRow() async throws {
        try await Harness.with { h in
            let ids = try await h.seedChanging(prefix: "rlh", count: 5)
            try await h.client.query("alter table users enable row level security")
            let grants =
                Self.jobGrants + [
                    "create policy job_read on {schema}.users for select to {role} using (true)",
                    "create policy job_write on {schema}.users for update to {role} using (id in ('\(ids[0])', '\(ids[1])', '\(ids[2])'))",
                ]
            try await Self.withRole(h, grants: grants) { env in
                let lock = PostgresQuery(unsafeSQL: "select 1 from \(Self.schema(of: h)).users where id = '\(ids[0])' for update")
                // The job itself, as for a policy that narrowed after `run` checked (rowSecurityRefusesAtApply).
                let result = try await Self.holdingRows(lock) {
                    try await PreflightProofTests.night(h, env: env, options: h.options { $0.maxDowngradeRatio = 1 }, statements: [])
                }
                #expect(result.exitStatus == .userErrors)
                #expect(result.summary.applied == 2)
                #expect(result.summary.concurrentUpdates == 1)
                #expect(result.summary.errors == 2)
                let rows = try h.report(result)
                #expect(rows[ids[0]]?.drift.contains("concurrent_update") == true)
                #expect(rows[ids[0]]?.drift.contains("write_refused") == false)
                #expect(rows[ids[0]]?.applied == false)
                #expect(rows[ids[0]]?.error?.contains("row-level security") != true)
                for id in ids[3...] {
                    #expect(rows[id]?.drift.contains("write_refused") == true)
                    #expect(rows[id]?.error?.contains("row-level security") == true)
                }
            }
            try await h.client.query("alter table users disable row level security")
        }
    }

    @Test(
        "the Supabase recipe with the README's policy and a webhook holding a user's profile while the job applies: that user is concurrent_update, never write_refused"
    )
    func supabaseHeldRow() async throws {
        let app = OwnTablesTests.appSchemaName()
        try await Harness.with(setUp: { schema in try await OwnTablesTests.loadExample(schema, app: app) }) { h in
            try await OwnTablesTests.cleaningUp(app, h.client) {
                try await OwnTablesTests.seedNight(h, app: app)
                try await h.client.query(PostgresQuery(unsafeSQL: "alter table \(app).profiles enable row level security"))
                try await h.client.query(PostgresQuery(unsafeSQL: "alter table \(app).ios_subscriptions enable row level security"))
                let grants =
                    Self.supabaseGrants(app: app) + [
                        "create policy subrecon_job on \(app).profiles for all to {role} using (true) with check (true)",
                        "create policy subrecon_job on \(app).ios_subscriptions for all to {role} using (true) with check (true)",
                    ]
                try await Self.withRole(h, grants: grants) { env in
                    let held = OwnTablesTests.downgraded
                    let lock = PostgresQuery(unsafeSQL: "select 1 from \(app).profiles where id = '\(held)'::uuid for update")
                    let result = try await Self.holdingRows(lock) {
                        try await Commands.run(environment: env, options: h.options(), logger: h.logger)
                    }
                    #expect(result.exitStatus == .ok)
                    #expect(result.summary.applied == 2)
                    #expect(result.summary.concurrentUpdates == 1)
                    #expect(result.summary.errors == 0)
                    let row = try h.report(result)[held]
                    #expect(row?.drift.contains("concurrent_update") == true)
                    #expect(row?.drift.contains("write_refused") == false)
                }
            }
        }
    }

    /// Runs `body` while another session (a webhook's open transaction) holds the rows `lock` locks.
    static func holdingRows<T>(_ lock: PostgresQuery, _ body: () async throws -> T) async throws -> T {
        let logger = Logger(label: "webhook")
        let webhook = try await PostgresConnection.connect(
            configuration: try TestDatabase.settings().connectionConfiguration(), id: 41, logger: logger)
        do {
            try await webhook.query("begin", logger: logger)
            try await webhook.query(lock, logger: logger)
            let value = try await body()
            try await webhook.query("rollback", logger: logger)
            try await webhook.close()
            return value
        } catch {
            try? await webhook.close()
            throw error
        }
    }

    // MARK: Helpers

    /// What a least-privilege job role gets (README, "Your database"): its schema, every table in it read and
    /// written, its sequences.
    static let jobGrants = [
        "grant usage on schema {schema} to {role}",
        "grant select, insert, update on all tables in schema {schema} to {role}",
        "grant usage on all sequences in schema {schema} to {role}",
    ]

    /// `docs/supabase-users-view.sql` part 6 with `public` → `app`, plus the job's own tables.
    static func supabaseGrants(app: String) -> [String] {
        jobGrants + [
            "grant usage on schema \(app) to {role}",
            "grant select, update on \(app).profiles, \(app).ios_subscriptions to {role}",
        ]
    }

    /// The harness's schema name (its `DATABASE_URL`'s `search_path`).
    static func schema(of h: Harness) -> String {
        let url = h.env.values["DATABASE_URL"] ?? ""
        return String(url.split(separator: "search_path=").last ?? "")
    }

    /// The test server's URL with `?`/`&` ready for more parameters.
    static func baseURL(user: String? = nil) throws -> String {
        _ = try TestDatabase.settings()  // throws when there is no test database
        var url = TestDatabase.url ?? ""
        if let user { url = url.replacingOccurrences(of: "postgres://postgres@", with: "postgres://\(user)@") }
        return url.contains("?") ? url : url + "?"
    }

    /// A login role `job_<hex>` with `grants` (`{role}`, `{schema}` substituted) and the harness's environment
    /// pointing at the schema as that role; dropped afterwards.
    static func withRole(_ h: Harness, grants: [String], _ body: (ProcessEnvironment) async throws -> Void) async throws {
        let role = "job_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(12)
        let schema = schema(of: h)
        try await h.client.query(PostgresQuery(unsafeSQL: "create role \(role) login"))
        var env = h.env
        env.values["DATABASE_URL"] = try baseURL(user: role) + "&search_path=\(schema)"
        do {
            for grant in grants {
                let sql = grant.replacingOccurrences(of: "{role}", with: role).replacingOccurrences(of: "{schema}", with: schema)
                try await h.client.query(PostgresQuery(unsafeSQL: sql))
            }
            try await body(env)
        } catch {
            await dropRole(role, h.client)
            throw error
        }
        await dropRole(role, h.client)
    }

    static func dropRole(_ role: String, _ client: PostgresClient) async {
        _ = try? await client.query(PostgresQuery(unsafeSQL: "drop owned by \(role)"))
        _ = try? await client.query(PostgresQuery(unsafeSQL: "drop role \(role)"))
    }
}
