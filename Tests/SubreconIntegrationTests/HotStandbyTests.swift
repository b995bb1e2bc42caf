import Foundation
import Logging
import PostgresNIO
import StoreSimulator
import SubreconCore
import SubreconDatabase
import SubreconJob
import SubreconPorts
import SubreconTestSupport
import Testing

/// The hot standby `scripts/test` starts (`scripts/pg-standby-start`).
enum TestStandby {
    static let standbyURL = ProcessInfo.processInfo.environment["SUBRECON_TEST_STANDBY_URL"].flatMap { $0.isEmpty ? nil : $0 }
    /// Without a standby the suite is skipped, saying so; under `SUBRECON_REQUIRE_DATABASE=1` it runs and fails.
    static let isEnabled = standbyURL != nil || TestDatabase.required
    static let skip: Comment =
        "SUBRECON_TEST_STANDBY_URL is not set: run scripts/test (scripts/pg-standby-start starts a hot standby of its PostgreSQL)"

}

/// The real binary against a real hot standby of the test PostgreSQL (`scripts/pg-standby-start`: streaming
/// replication, `hot_standby = on`), as `DATABASE_URL` may point after a failover (docs/CONTRACT.md, "What `run`
/// checks first"). The schema is made on the primary and waited for on the standby.
@Suite(
    "A hot standby", .serialized, .enabled(if: TestStandby.isEnabled, TestStandby.skip), .timeLimit(.minutes(5)))
struct HotStandbyTests {
    struct Missing: Error, CustomStringConvertible {
        var description: String { "SUBRECON_REQUIRE_DATABASE=1 but SUBRECON_TEST_STANDBY_URL is not set: scripts/test sets it" }
    }

    /// The standby's URL in `schema`.
    static func url(schema: String) throws -> String {
        guard let standbyURL = TestStandby.standbyURL else { throw Missing() }
        return standbyURL + (standbyURL.contains("?") ? "&" : "?") + "search_path=\(schema)"
    }

    /// Returns once the standby has replayed everything the primary (`primary`) has written so far.
    static func waitForReplay(primary: PostgresClient, logger: Logger) async throws {
        guard let standbyURL = TestStandby.standbyURL else { throw Missing() }
        // The insert position, not the write position: commits are asynchronous on the test server.
        let target = try #require(
            try await TestDatabase.scalar(primary, "select pg_current_wal_insert_lsn()::text", as: String.self))
        let settings = try DatabaseSettings(environment: ["DATABASE_URL": standbyURL])
        let connection = try await PostgresConnection.connect(configuration: try settings.connectionConfiguration(), id: 1, logger: logger)
        let replayed: Bool
        do {
            replayed = try await replays(connection, upTo: target, logger: logger)
            try await connection.close()
        } catch {
            try? await connection.close()
            throw error
        }
        if !replayed { Issue.record("the standby did not replay up to \(target) within 30 s") }
    }

    /// Polls the standby on `connection` until it replayed `target`: true, or false after 30 s.
    static func replays(_ connection: PostgresConnection, upTo target: String, logger: Logger) async throws -> Bool {
        let deadline = ContinuousClock.now + .seconds(30)
        var binds = PostgresBindings()
        binds.append(target)
        while ContinuousClock.now < deadline {
            let rows = try await connection.query(
                PostgresQuery(
                    unsafeSQL: "select pg_is_in_recovery(), coalesce(pg_last_wal_replay_lsn() >= $1::pg_lsn, false)", binds: binds),
                logger: logger)
            for try await (recovery, replayed) in rows.decode((Bool, Bool).self) {
                #expect(recovery, "the standby is in recovery")
                if replayed { return true }
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        return false
    }

    static func binary(_ h: Harness, _ arguments: [String], schema: String) async throws -> BinaryRun {
        var env = h.env.values
        env["DATABASE_URL"] = try url(schema: schema)
        return try await BinaryRun.run(arguments, environment: env, directory: h.reportDirectory, limit: .seconds(60))
    }

    @Test("run against the standby: exit 69 naming the hot standby before any store is asked; no run; no --resume; a dry run works")
    func runRefused() async throws {
        try await Harness.with { h in
            _ = try await h.seedChanging(prefix: "sb", count: 2)
            try await Self.waitForReplay(primary: h.client, logger: h.logger)
            let schema = OperatorDatabaseTests.schema(of: h)
            let run = try await Self.binary(
                h, ["run", "--as-of", ISO8601.string(Harness.asOf), "--apply-past", "--report-dir", h.reportDirectory.path],
                schema: schema)
            #expect(run.status == 69, "\(run.operatorLines)")
            #expect(run.operatorLines.count == 1, "\(run.operatorLines)")
            let line = run.operatorLines.first ?? ""
            #expect(line.contains("read-only") && line.contains("hot standby"), "\(line)")
            #expect(!line.contains("--resume"), "\(line)")
            #expect(await h.revenueCat.counters().totalRequests == 0, "no store was asked")
            #expect(try await h.count("select count(*)::int from reconcile_runs") == 0, "no run recorded")

            let dry = try await Self.binary(
                h, ["run", "--dry-run", "--as-of", ISO8601.string(Harness.asOf), "--report-dir", h.reportDirectory.path],
                schema: schema)
            #expect(dry.status == 0, "a dry run reads only: \(dry.operatorLines)")

            // explain reads only too: the row as the standby has it, the sources asked, nothing written.
            let explain = try await Self.binary(h, ["explain", "sb-000", "--as-of", ISO8601.string(Harness.asOf)], schema: schema)
            #expect(explain.status == 0, "explain works on a hot standby: \(explain.operatorLines)")
            #expect(explain.stdoutText.contains("sb-000"), "\(explain.stdoutText.prefix(400))")
        }
    }

    @Test("migrate against the standby: a current schema is a no-op (0); a schema with pending migrations is 69 naming it, never 75 or 78")
    func migrate() async throws {
        try await Harness.with { h in
            try await Self.waitForReplay(primary: h.client, logger: h.logger)
            let current = try await Self.binary(h, ["migrate"], schema: OperatorDatabaseTests.schema(of: h))
            #expect(current.status == 0, "\(current.operatorLines)")
            #expect(current.operatorLines.isEmpty, "\(current.operatorLines)")

            try await TestDatabase.withSchema(prefix: "sb_") { bare in
                try await Self.waitForReplay(primary: bare.client, logger: h.logger)
                let pending = try await Self.binary(h, ["migrate"], schema: bare.name)
                #expect(pending.status == 69, "\(pending.operatorLines)")
                #expect(pending.operatorLines.count == 1, "\(pending.operatorLines)")
                let line = pending.operatorLines.first ?? ""
                #expect(line.contains("read-only") && line.contains("hot standby"), "\(line)")
                #expect(!line.contains("--resume"), "\(line)")
            }
        }
    }
}
