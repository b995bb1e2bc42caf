import Foundation
import PostgresNIO
import StoreSimulator
import SubreconApp
import SubreconCommand
import SubreconCore
import SubreconDatabase
import SubreconJob
import SubreconPorts
import SubreconReports
import Testing

/// The report folder as configuration (docs/CONTRACT.md, "Reports" and "Exit codes"): a `latest` that is not the
/// link the job keeps is found before anything is applied or asked (78), on a new run and on every `--resume`; and
/// a failure where nothing can be resumed is never 75.
@Suite("The report folder is configuration", .serialized, .enabled(if: Harness.isEnabled, Harness.skip), .timeLimit(.minutes(5)))
struct ReportFolderConfigTests {
    func runCount(_ h: Harness) async throws -> Int { try await h.count("select count(*)::int from reconcile_runs") }

    @Test("a real directory (or a file, or a foreign link) named latest: 78 before anything is applied or asked")
    func latestNotOurLink() async throws {
        try await Harness.with { h in
            try await h.seed(h.row("l-1", tier: 1, "active", end: -2), Harness.subscription(expires: -2))
            let latest = h.reportDirectory.appendingPathComponent("latest")
            let makers: [(String, () throws -> Void)] = [
                ("a directory", { try FileManager.default.createDirectory(at: latest, withIntermediateDirectories: true) }),
                ("a file", { try Data("x".utf8).write(to: latest) }),
                (
                    "a link to an absolute path",
                    { try FileManager.default.createSymbolicLink(atPath: latest.path, withDestinationPath: "/tmp") }
                ),
            ]
            for (what, make) in makers {
                try make()
                for dryRun in [false, true] {
                    let refused = await commandFailure {
                        try await h.run {
                            $0.maxDowngradeRatio = 1
                            $0.dryRun = dryRun
                        }
                    }
                    #expect(refused?.status == .config, "\(what), dry run \(dryRun): \(refused?.description ?? "")")
                    #expect(refused?.description.contains(latest.path) == true, "\(what): names the path")
                }
                try FileManager.default.removeItem(at: latest)
            }
            #expect(try await h.user("l-1")?.currentTier == 1, "nothing applied")
            #expect(try await runCount(h) == 0, "no run recorded")
            #expect(await h.revenueCat.counters().totalRequests == 0, "no source asked")

            // Without it, the run goes through and makes its own link; the next run replaces that link.
            let first = try await h.run { $0.maxDowngradeRatio = 1 }
            #expect(first.exitStatus == .ok)
            let second = try await h.run { $0.maxDowngradeRatio = 1 }
            #expect(second.exitStatus == .ok)
            #expect(try FileManager.default.destinationOfSymbolicLink(atPath: latest.path) == second.summary.runID)
        }
    }

    @Test("--resume / --accept-downgrades with a directory named latest: 78 before anything is applied, every time")
    func resumeWithLatestDirectory() async throws {
        try await Harness.with { h in
            try await h.seed(h.row("l-2", tier: 1, "active", end: -2), Harness.subscription(expires: -2))
            let tripped = try await h.run { $0.maxDowngradeRatio = 0 }
            #expect(tripped.exitStatus == .valveTripped)
            let latest = h.reportDirectory.appendingPathComponent("latest")
            try FileManager.default.removeItem(at: latest)
            try FileManager.default.createDirectory(at: latest, withIntermediateDirectories: true)
            for _ in 0..<2 {
                let refused = await commandFailure {
                    try await Commands.run(
                        environment: h.env, options: h.options { $0.acceptDowngrades = true }, logger: h.logger,
                        resume: tripped.summary.runID)
                }
                #expect(refused?.status == .config, "\(refused?.description ?? "")")
            }
            #expect(try await h.user("l-2")?.currentTier == 1, "nothing applied")
            let status = try await TestDatabaseScalar.status(h, tripped.summary.runID)
            #expect(status == "valve_tripped", "the run is still the one the valve stopped")

            try FileManager.default.removeItem(at: latest)
            let accepted = try await Commands.run(
                environment: h.env, options: h.options { $0.acceptDowngrades = true }, logger: h.logger, resume: tripped.summary.runID)
            #expect(accepted.exitStatus == .ok)
            #expect(try await h.user("l-2")?.currentTier == 0)
        }
    }

    @Test("a NUL (or another control character) in a dry run's --users-file is 64 naming the line, not 75")
    func usersFileControlCharacters() async throws {
        try await Harness.with { h in
            try await h.seed(h.row("u-1", tier: 1, "active", end: -2), Harness.subscription(expires: -2))
            for (what, bytes) in [
                ("a NUL", Array("u-1\nu\u{0}2\n".utf8)), ("an escape", Array("u-1\nu\u{1B}[2J\n".utf8)),
                ("invalid UTF-8", Array("u-1\n".utf8) + [0x75, 0xFF, 0x0A]),
            ] {
                let file = h.reportDirectory.appendingPathComponent("users.txt")
                try Data(bytes).write(to: file)
                let run = try await BinaryRun.run(
                    [
                        "run", "--dry-run", "--as-of", ISO8601.string(Harness.asOf), "--users-file", file.path, "--report-dir",
                        h.reportDirectory.path,
                    ], environment: h.env.values, directory: h.reportDirectory)
                #expect(run.status == 64, "\(what): \(run.operatorLines)")
                #expect(run.operatorLines.first?.contains("\(file.path):2:") == true, "\(what): \(run.operatorLines)")
            }
            // A leading BOM is not part of the first id.
            let file = h.reportDirectory.appendingPathComponent("bom.txt")
            try Data([0xEF, 0xBB, 0xBF] + Array("u-1\n".utf8)).write(to: file)
            #expect(try UsersFile.read(path: file.path) == ["u-1"])
        }
    }

    @Test("report RUN_ID into a folder that cannot be written is 78 naming it, not 75")
    func reportUnwritable() async throws {
        try await Harness.with { h in
            try await h.seed(h.row("r-1", tier: 1, "active", end: -2), Harness.subscription(expires: -2))
            let result = try await h.run { $0.maxDowngradeRatio = 1 }
            let file = h.reportDirectory.appendingPathComponent("a-file")
            try Data("x".utf8).write(to: file)
            let refused = await commandFailure {
                try await Commands.report(
                    environment: h.env, runID: result.summary.runID, reportDirectory: file.appendingPathComponent("reports"),
                    logger: h.logger)
            }
            #expect(refused?.status == .config, "\(refused?.description ?? "")")
            #expect(refused?.description.contains(file.path) == true, "\(refused?.description ?? "")")
        }
    }
}

enum TestDatabaseScalar {
    static func status(_ h: Harness, _ runID: String) async throws -> String? {
        for try await status in try await h.client.query("select status from reconcile_runs where id = \(runID)").decode(String.self) {
            return status
        }
        return nil
    }
}
