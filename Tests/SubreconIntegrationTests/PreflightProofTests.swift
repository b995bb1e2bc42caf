import Foundation
import Logging
import PostgresNIO
import SourceHTTP
import StoreSimulator
import SubreconApp
import SubreconCore
import SubreconDatabase
import SubreconJob
import SubreconReports
import SubreconTestSupport
import Testing

/// What `run` and `doctor` must prove before any store is asked (docs/CONTRACT.md, "What run checks first"): that the
/// job's role sees every row of `users` (row-level security admitting only some rows, as Supabase's commonest
/// policies do, would make a night of zero candidates that exits 0), and that it holds its privileges where the reads
/// and writes really happen (the tables under a `security_invoker` view). A privilege lost during a run is exit 78
/// naming it, never 75 (docs/CONTRACT.md, "Exit codes"). Each role is made here, never a superuser.
@Suite("What run proves first", .serialized, .enabled(if: Harness.isEnabled, Harness.skip), .timeLimit(.minutes(5)))
struct PreflightProofTests {
    /// Policies that admit only some rows of `users` to the job's role (`{auth}`: a role the job's is not a member of).
    static let admitsSome: [(name: String, statements: [String])] = [
        (
            "Supabase's auth.uid()",
            [
                "create function {schema}.auth_uid() returns text language sql stable as "
                    + "$$ select nullif(current_setting('request.jwt.claim.sub', true), '') $$",
                "create policy own_row on {schema}.users for all using (id = {schema}.auth_uid()) with check (id = {schema}.auth_uid())",
            ]
        ),
        (
            "a JWT claim",
            ["create policy own_row on {schema}.users using (id = (current_setting('request.jwt.claims', true)::json ->> 'sub'))"]
        ),
        (
            "a restrictive policy beside a permissive USING (true)",
            [
                "create policy job_all on {schema}.users for all to {role} using (true) with check (true)",
                "create policy tenant_only on {schema}.users as restrictive for all using (false)",
            ]
        ),
        (
            "TO authenticated, a role the job's is not a member of",
            ["create policy authenticated_all on {schema}.users for all to {auth} using (true) with check (true)"]
        ),
        (
            "an UPDATE whose WITH CHECK admits only some rows",
            ["create policy job_all on {schema}.users for all to {role} using (true) with check (id like 'x%')"]
        ),
    ]

    @Test(
        "row-level security admitting only some rows: run exits 78 naming the table, the role and the policy to add, before any store is asked"
    )
    func policiesAdmittingSomeRows() async throws {
        try await Harness.with { h in
            _ = try await h.seedChanging(prefix: "rls", count: 4)
            let auth = "authenticated_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(8)
            try await h.client.query(PostgresQuery(unsafeSQL: "create role \(auth) nologin"))
            for (name, statements) in Self.admitsSome {
                let grants = statements.map { $0.replacingOccurrences(of: "{auth}", with: auth) }
                try await Self.withPolicies(h, grants) { env, role in
                    let (status, line) = try await OwnTablesTests.failure {
                        _ = try await Commands.run(environment: env, options: h.options(), logger: h.logger)
                    }
                    #expect(status == .config, "\(name): \(line)")
                    #expect(line.contains("row-level security on \(OperatorDatabaseTests.schema(of: h)).users"), "\(name): \(line)")
                    #expect(line.contains("role \(role)"), "\(name): \(line)")
                    #expect(line.contains("create policy subrecon_all on"), "\(name): \(line)")
                    #expect(await h.revenueCat.counters().totalRequests == 0, "\(name)")
                    #expect(try await h.count("select count(*)::int from reconcile_runs") == 0, "\(name)")
                }
            }
            await OperatorDatabaseTests.dropRole(auth, h.client)
        }
    }

    @Test("a TO PUBLIC USING (true) policy proves every row: the night applies; a SELECT-only one proves a dry run only")
    func policiesAdmittingEveryRow() async throws {
        try await Harness.with { h in
            let ids = try await h.seedChanging(prefix: "pub", count: 4)
            try await Self.withPolicies(h, ["create policy open_read on {schema}.users for select to public using (true)"]) { env, _ in
                let dry = try await Commands.run(environment: env, options: h.options { $0.dryRun = true }, logger: h.logger)
                #expect(dry.exitStatus == .ok)
                #expect(dry.summary.candidates == ids.count)
                let (status, line) = try await OwnTablesTests.failure {
                    _ = try await Commands.run(environment: env, options: h.options(), logger: h.logger)
                }
                #expect(status == .config)
                #expect(line.contains("UPDATE"), "\(line)")
            }
            try await Self.withPolicies(
                h, ["create policy open_all on {schema}.users for all to public using (true) with check (true)"]
            ) { env, _ in
                let result = try await Commands.run(environment: env, options: h.options(), logger: h.logger)
                #expect(result.exitStatus == .ok)
                #expect(result.summary.applied == ids.count)
            }
        }
    }

    @Test("doctor says what run says: an auth.uid()-style policy is ✗ on the role line, 78")
    func doctorRowSecurity() async throws {
        try await Harness.with { h in
            try await Self.withPolicies(h, Self.admitsSome[0].statements) { env, role in
                let run = try await DoctorTests.doctor(h, env: env.values)
                #expect(run.status == 78, "\(run.stdoutText)")
                let line = DoctorTests.line(run, "role")
                #expect(line.hasPrefix("✗ role: ") && line.contains("row-level security on") && line.contains(role), "\(line)")
            }
        }
    }

    @Test("a security_invoker view over a table the role has no grant on: run and doctor exit 78 naming it, before any store is asked")
    func securityInvokerView() async throws {
        try await Harness.with { h in
            _ = try await h.seedChanging(prefix: "inv", count: 4)
            try await h.client.query("alter table users rename to app_users")
            try await h.client.query("create view users with (security_invoker = true) as select * from app_users")
            try await OperatorDatabaseTests.withRole(
                h, grants: OperatorDatabaseTests.jobGrants + ["revoke all on {schema}.app_users from {role}"]
            ) { env in
                let (status, line) = try await OwnTablesTests.failure {
                    _ = try await Commands.run(environment: env, options: h.options(), logger: h.logger)
                }
                #expect(status == .config, "\(line)")
                #expect(line.contains("SELECT on \(OperatorDatabaseTests.schema(of: h)).app_users"), "\(line)")
                #expect(await h.revenueCat.counters().totalRequests == 0)
                #expect(try await h.count("select count(*)::int from reconcile_runs") == 0)
                let doctor = try await DoctorTests.doctor(h, env: env.values)
                #expect(doctor.status == 78, "\(doctor.stdoutText)")
                #expect(DoctorTests.line(doctor, "role").contains("app_users"), "\(doctor.stdoutText)")
            }
        }
    }

    @Test(
        "a view run as its owner, who may not read the table beneath: 78 naming the owner; granted, the night applies"
    )
    func viewOwnerPrivileges() async throws {
        try await Harness.with { h in
            let ids = try await h.seedChanging(prefix: "own", count: 2)
            let owner = "owner_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(8)
            try await h.client.query(PostgresQuery(unsafeSQL: "create role \(owner) nologin"))
            try await h.client.query("alter table users rename to app_users")
            try await h.client.query("create view users as select * from app_users")
            try await h.client.query(PostgresQuery(unsafeSQL: "alter view users owner to \(owner)"))
            try await OperatorDatabaseTests.withRole(h, grants: OperatorDatabaseTests.jobGrants) { env in
                let (status, line) = try await OwnTablesTests.failure {
                    _ = try await Commands.run(environment: env, options: h.options(), logger: h.logger)
                }
                #expect(status == .config, "\(line)")
                #expect(line.contains("SELECT on \(OperatorDatabaseTests.schema(of: h)).app_users (for role \(owner)"), "\(line)")
                #expect(await h.revenueCat.counters().totalRequests == 0)
                try await h.client.query(PostgresQuery(unsafeSQL: "grant select, update on app_users to \(owner)"))
                let result = try await Commands.run(environment: env, options: h.options(), logger: h.logger)
                #expect(result.exitStatus == .ok)
                #expect(result.summary.applied == ids.count)
            }
            await OperatorDatabaseTests.dropRole(owner, h.client)
        }
    }

    @Test("row-level security under a security_invoker view is judged on the table beneath, for the job's role")
    func rowSecurityBeneathView() async throws {
        try await Harness.with { h in
            let ids = try await h.seedChanging(prefix: "rlv", count: 2)
            try await h.client.query("alter table users rename to app_users")
            try await h.client.query("create view users with (security_invoker = true) as select * from app_users")
            try await h.client.query("alter table app_users enable row level security")
            let jwt =
                "create policy own_row on {schema}.app_users using (id = (current_setting('request.jwt.claims', true)::json ->> 'sub'))"
            try await OperatorDatabaseTests.withRole(h, grants: OperatorDatabaseTests.jobGrants + [jwt]) { env in
                let (status, line) = try await OwnTablesTests.failure {
                    _ = try await Commands.run(environment: env, options: h.options(), logger: h.logger)
                }
                #expect(status == .config, "\(line)")
                #expect(line.contains("row-level security on \(OperatorDatabaseTests.schema(of: h)).app_users"), "\(line)")
                #expect(line.contains("role \(Self.role(env))") && line.contains("own_row"), "\(line)")
                try await h.client.query(
                    PostgresQuery(
                        unsafeSQL: "create policy job_all on app_users for all to \(Self.role(env)) using (true) with check (true)"))
                let result = try await Commands.run(environment: env, options: h.options(), logger: h.logger)
                #expect(result.exitStatus == .ok)
                #expect(result.summary.applied == ids.count)
                try await h.client.query("drop policy job_all on app_users")
            }
        }
    }

    @Test("a privilege revoked while the run asks the stores: the run stops with 78 naming the privilege, never 75")
    func privilegeLostDuringTheRun() async throws {
        try await Harness.with { h in
            _ = try await h.seedChanging(prefix: "rev", count: 4)
            try await OperatorDatabaseTests.withRole(h, grants: OperatorDatabaseTests.jobGrants) { env in
                let schema = OperatorDatabaseTests.schema(of: h)
                let role = Self.role(env)
                let revoke =
                    "revoke insert on \(schema).reconcile_verdicts, \(schema).reconcile_changes, \(schema).push_intents from \(role)"
                let (status, line) = try await OwnTablesTests.failure {
                    _ = try await Self.night(h, env: env, statements: [revoke])
                }
                #expect(status == .config, "\(line)")
                #expect(line.contains("42501") && line.contains("permission denied"), "\(line)")
                #expect(line.contains("--resume"), "\(line)")
            }
        }
    }

    /// A night as the role of `env`, through the job itself (no check first: the database changes under a run),
    /// `statements` run as the superuser each time a user is asked.
    static func night(
        _ h: Harness, env: ProcessEnvironment, options: RunOptions? = nil, runID: String = "run-changed", statements: [String]
    ) async throws -> RunResult {
        let config = try SubreconConfiguration.load(env, requireSource: true)
        let logger = h.logger
        let client = h.client
        let options = options ?? h.options()
        return try await Commands.withDatabase(config.database, logger: logger) { database in
            let db = database.with(users: try await database.checkUsers(requiring: []))
            return try await HTTPClientScope.with { http in
                let stats = RequestStats()
                let real = try StoreFactSource(configuration: config, httpClient: http, stats: stats, logger: logger)
                let source = StatementDuringFetch(inner: real, client: client, statements: statements)
                let job = ReconcileJob(ports: JobPorts(postgres: db), source: source, stats: stats, sourcesNote: real.notes, logger: logger)
                return try await job.run(options, runID: runID)
            }
        }
    }

    /// The role named in `env`'s `DATABASE_URL`.
    static func role(_ env: ProcessEnvironment) -> String {
        let url = env.values["DATABASE_URL"] ?? ""
        return String(url.split(separator: "://").last?.prefix { $0 != "@" } ?? "")
    }

    /// `statements` (`{role}`, `{schema}` substituted) with row-level security on `users`, as a role of the test;
    /// every policy on `users` is dropped and RLS turned off afterwards.
    static func withPolicies(
        _ h: Harness, _ statements: [String], _ body: (ProcessEnvironment, String) async throws -> Void
    ) async throws {
        let grants = OperatorDatabaseTests.jobGrants + ["alter table {schema}.users enable row level security"] + statements
        do {
            try await OperatorDatabaseTests.withRole(h, grants: grants) { env in try await body(env, Self.role(env)) }
        } catch {
            try await clearPolicies(h)
            throw error
        }
        try await clearPolicies(h)
    }

    static func clearPolicies(_ h: Harness) async throws {
        let rows = try await h.client.query(
            "select format('drop policy %I on %s', polname, polrelid::regclass) from pg_policy where polrelid = to_regclass('users')")
        var drops: [String] = []
        for try await drop in rows.decode(String.self) { drops.append(drop) }
        for drop in drops { try await h.client.query(PostgresQuery(unsafeSQL: drop)) }
        try await h.client.query("alter table users disable row level security")
    }
}

/// A source that runs `statements` (as the superuser; each may fail) before each user is asked: the database
/// changing under a run.
struct StatementDuringFetch: FactSource {
    let inner: StoreFactSource
    let client: PostgresClient
    let statements: [String]

    func facts(for row: UserRow) async -> SourceFacts {
        for statement in statements { _ = try? await client.query(PostgresQuery(unsafeSQL: statement)) }
        return await inner.facts(for: row)
    }
}
