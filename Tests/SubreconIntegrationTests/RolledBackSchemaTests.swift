import Foundation
import PostgresNIO
import StoreSimulator
import SubreconApp
import SubreconCore
import SubreconDatabase
import SubreconJob
import SubreconPorts
import Testing

/// A rolled-back deploy (docs/CONTRACT.md, "Database"): a schema migrated by a newer release than this binary is
/// refused by `migrate`, `run` and `explain` with one line naming both versions (78), before anything is touched.
@Suite(
    "A schema newer than the binary (rolled-back deploy)", .serialized, .enabled(if: Harness.isEnabled, Harness.skip),
    .timeLimit(.minutes(3)))
struct RolledBackSchemaTests {
    static let known = SchemaMigrator().latestVersion
    static let newer = known + 1

    /// The harness's schema, as a newer release left it: one more version recorded than this build knows.
    func rollBack(_ h: Harness) async throws {
        try await h.client.query(
            "insert into subrecon_schema_migrations (version, name) values (\(Self.newer), 'from a newer release')")
    }

    func refusal(_ body: () async throws -> Void) async -> CommandFailure? {
        do {
            try await body()
            Issue.record("expected the newer schema to be refused")
            return nil
        } catch let failure as CommandFailure {
            return failure
        } catch {
            Issue.record("expected a CommandFailure, got \(error)")
            return nil
        }
    }

    func expectNamesBothVersions(_ failure: CommandFailure?, _ command: String) {
        #expect(failure?.status == .config, "\(command): \(failure?.description ?? "no failure")")
        let line = failure?.description ?? ""
        #expect(!line.contains("\n"), "\(command): one line")
        #expect(line.contains("version \(Self.newer)") && line.contains("version \(Self.known)"), "\(command): \(line)")
    }

    func migrationRows(_ h: Harness) async throws -> [String] {
        var rows: [String] = []
        for try await (version, name) in try await h.client.query(
            "select version, coalesce(name, '') from subrecon_schema_migrations order by version"
        ).decode((Int, String).self) { rows.append("\(version) \(name)") }
        return rows
    }

    @Test("migrate does not say up to date: 78 naming both versions, nothing recorded")
    func migrateRefuses() async throws {
        try await Harness.with { h in
            try await rollBack(h)
            let before = try await migrationRows(h)
            let refused = await refusal { _ = try await Commands.migrate(environment: h.env, logger: h.logger) }
            expectNamesBothVersions(refused, "migrate")
            #expect(try await migrationRows(h) == before, "nothing recorded")
        }
    }

    @Test("run applies nothing, asks no source, records no run and writes no report folder: 78 naming both versions")
    func runRefuses() async throws {
        try await Harness.with { h in
            try await h.seed(h.row("rb-1", tier: 1, "active", end: -2), Harness.subscription(expires: -2))
            try await rollBack(h)
            for dryRun in [false, true] {
                let refused = await refusal {
                    _ = try await h.run {
                        $0.maxDowngradeRatio = 1
                        $0.dryRun = dryRun
                    }
                }
                expectNamesBothVersions(refused, dryRun ? "run --dry-run" : "run")
            }
            #expect(try await h.user("rb-1")?.currentTier == 1, "nothing applied")
            #expect(try await h.count("select count(*)::int from reconcile_runs") == 0, "no run recorded")
            #expect(await h.revenueCat.counters().totalRequests == 0, "no source asked")
            let entries = try FileManager.default.contentsOfDirectory(atPath: h.reportDirectory.path)
            #expect(entries == ["root.pem"], "no run folder, no latest: \(entries)")
        }
    }

    @Test("explain asks no source: 78 naming both versions")
    func explainRefuses() async throws {
        try await Harness.with { h in
            try await h.seed(h.row("rb-2", tier: 1, "active", end: -2), Harness.subscription(expires: 28))
            try await rollBack(h)
            let refused = await refusal {
                _ = try await Commands.explain(environment: h.env, userID: "rb-2", asOf: Harness.asOf, logger: h.logger)
            }
            expectNamesBothVersions(refused, "explain")
            #expect(await h.revenueCat.counters().totalRequests == 0, "no source asked")
        }
    }

    @Test("the binary: every command that touches the database exits 78 with one line naming both versions")
    func binary() async throws {
        try await Harness.with { h in
            try await h.seed(h.row("rb-3", tier: 1, "active", end: -2), Harness.subscription(expires: -2))
            try await rollBack(h)
            let products = h.reportDirectory.appendingPathComponent("products.csv")
            try Data("product_id,tier\r\npremium_monthly,1\r\n".utf8).write(to: products)
            let tiersBefore = try await h.count("select count(*)::int from product_tiers")
            let commands: [[String]] = [
                ["migrate"],
                ["run", "--as-of", ISO8601.string(Harness.asOf), "--apply-past", "--report-dir", h.reportDirectory.path],
                ["run", "--resume", "20260601T030000Z-0123abcd", "--report-dir", h.reportDirectory.path],
                ["explain", "rb-3", "--as-of", ISO8601.string(Harness.asOf)],
                ["report", "20260601T030000Z-0123abcd", "--report-dir", h.reportDirectory.path],
                ["products", "list"], ["products", "import", products.path], ["products", "check", "--report-dir", h.reportDirectory.path],
            ]
            for arguments in commands {
                let (process, err) = try SubreconBinary.start(arguments, environment: h.env.values, directory: h.reportDirectory)
                #expect(try await SubreconBinary.wait(process, limit: .seconds(60)) == 78, "\(arguments[0])")
                let lines = try String(contentsOf: err, encoding: .utf8).split(separator: "\n").filter { $0.hasPrefix("subrecon: ") }
                #expect(lines.count == 1, "\(arguments[0]): \(lines)")
                #expect(
                    lines.first.map { $0.contains("version \(Self.newer)") && $0.contains("version \(Self.known)") } == true,
                    "\(arguments[0]): \(lines)")
            }
            #expect(try await h.user("rb-3")?.currentTier == 1, "nothing applied")
            #expect(try await h.count("select count(*)::int from product_tiers") == tiersBefore, "nothing imported")
            #expect(await h.revenueCat.counters().totalRequests == 0, "no source asked")
            // doctor reports it as its database line and exits 78 too.
            let doctor = try await BinaryRun.run(["doctor"], environment: h.env.values, directory: h.reportDirectory, limit: .seconds(60))
            #expect(doctor.status == 78, "doctor: \(doctor.stdoutText) \(doctor.stderr)")
            let said = doctor.stdoutText + doctor.stderr
            #expect(said.contains("version \(Self.newer)") && said.contains("version \(Self.known)"), "doctor: \(said)")
        }
    }
}
