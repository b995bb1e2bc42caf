import Foundation
import PostgresNIO
import StoreSimulator
import SubreconApp
import SubreconCore
import SubreconDatabase
import SubreconJob
import SubreconPorts
import SubreconTestKit
import Testing

/// The built executable, run as a child process with the harness's environment (as cron or systemd run it).
enum SubreconBinary {
    static let path: String = {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return root.appendingPathComponent(".build/debug/subrecon").path
    }()

    struct Missing: Error, CustomStringConvertible {
        var description: String { "\(SubreconBinary.path) is missing: run swift build first" }
    }

    /// Starts `subrecon ARGUMENTS` with `environment`; its output goes to files in `directory`. Returns the
    /// process and the file holding its standard error.
    static func start(_ arguments: [String], environment: [String: String], directory: URL) throws -> (Process, URL) {
        guard FileManager.default.isExecutableFile(atPath: path) else { throw Missing() }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        var env = environment
        env["PATH"] = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        env["SUBRECON_LOG_FORMAT"] = "json"
        // A level asked for the tests (SUBRECON_LOG_LEVEL=debug swift test …) reaches the binary too.
        env["SUBRECON_LOG_LEVEL"] = ProcessInfo.processInfo.environment["SUBRECON_LOG_LEVEL"] ?? env["SUBRECON_LOG_LEVEL"]
        process.environment = env
        let stamp = UUID().uuidString.prefix(8)
        let out = directory.appendingPathComponent("stdout-\(stamp).txt")
        let err = directory.appendingPathComponent("stderr-\(stamp).txt")
        _ = FileManager.default.createFile(atPath: out.path, contents: nil)
        _ = FileManager.default.createFile(atPath: err.path, contents: nil)
        process.standardOutput = try FileHandle(forWritingTo: out)
        process.standardError = try FileHandle(forWritingTo: err)
        process.standardInput = FileHandle.nullDevice
        try process.run()
        return (process, err)
    }

    /// The exit status once the process ended, or nil if it is still running after `limit` (it is then killed).
    static func wait(_ process: Process, limit: Duration) async throws -> Int32? {
        let ended = try await TestPoll.until(limit, interval: .milliseconds(50)) { !process.isRunning }
        if !ended {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            return nil
        }
        return process.terminationStatus
    }
}

/// SIGTERM and kill -9 in the middle of a run of the real binary, then `--resume`.
@Suite("Stopping the real binary mid-run", .serialized, .enabled(if: Harness.isEnabled, Harness.skip), .timeLimit(.minutes(3)))
struct SignalTests {
    /// These tests stop the binary at a chosen point and count the requests each user cost. On a loaded machine the
    /// harness's 2 s request timeout can expire, and timed-out attempts (or RevenueCat judged down after them) would
    /// re-ask users on resume for a reason that is not the one under test; a patient timeout keeps the counts exact.
    static let patientHTTP = ["SUBRECON_HTTP_TIMEOUT_SECONDS": "20"]
    /// For the tests that hold a table lock under the apply batch: a loaded machine can take longer than the default
    /// 10 s lock_timeout between the batch starting to wait and the test releasing it, and the batch would then fail
    /// for a reason that is not under test.
    static let patientLocks = patientHTTP.merging(["SUBRECON_DB_LOCK_TIMEOUT_SECONDS": "60"]) { $1 }

    func runArguments(_ h: Harness, _ extra: [String] = []) -> [String] {
        [
            "run", "--as-of", ISO8601.string(Harness.asOf), "--apply-past", "--max-downgrade-ratio", "1", "--report-dir",
            h.reportDirectory.path,
        ]
            + extra
    }

    func onlyRunID(_ h: Harness) async throws -> String {
        var ids: [String] = []
        for try await id in try await h.client.query("select id from reconcile_runs").decode(String.self) { ids.append(id) }
        #expect(ids.count == 1)
        return try #require(ids.first)
    }

    /// Resumes `runID` with the binary and checks that every user was reconciled exactly once.
    func resumeAndCheck(_ h: Harness, runID: String, ids: [String], notAskedAgain: Set<String>) async throws {
        let askedBefore = await h.revenueCat.counters().requestsPerUser
        let (resume, _) = try SubreconBinary.start(
            ["run", "--resume", runID, "--report-dir", h.reportDirectory.path], environment: h.env.values, directory: h.reportDirectory)
        #expect(try await SubreconBinary.wait(resume, limit: .seconds(120)) == 0)
        let asked = await h.revenueCat.counters().requestsPerUser
        for id in notAskedAgain { #expect(asked[id] == askedBefore[id], "\(id) validated before the stop is not asked again") }
        #expect(try await h.count("select count(*)::int from reconcile_verdicts") == ids.count, "one verdict per user")
        // `seedChanging`'s users alternate: the even ones expired (one `expired` intent), the odd ones renewed (none).
        for (n, id) in ids.enumerated() {
            #expect(try await h.auditRows(id) == 1, "one audit row for \(id)")
            #expect(try await h.intents(id) == (n % 2 == 0 ? 1 : 0), "exactly the intents \(id)'s change calls for")
        }
        #expect(try await h.count("select count(*)::int from reconcile_runs where status = 'completed'") == 1)
    }

    /// Returns once `condition` holds while `process` still runs; records an issue (and returns) when the process
    /// ended first or `limit` passed. Polls the observable condition, never a fixed sleep.
    func waitFor(
        _ process: Process, _ what: String, limit: Duration = .seconds(30), _ condition: () async throws -> Bool
    ) async throws {
        var ended = false
        let reached = try await TestPoll.until(limit, interval: .milliseconds(10)) {
            ended = !process.isRunning
            if ended { return true }
            return try await condition()
        }
        if ended {
            Issue.record("the process ended before: \(what)")
        } else if !reached {
            Issue.record("not reached within \(limit): \(what)")
        }
    }

    func ledgerUsers(_ h: Harness) async throws -> Set<String> {
        var users = Set<String>()
        for try await id in try await h.client.query("select user_id from reconcile_verdicts").decode(String.self) { users.insert(id) }
        return users
    }

    @Test("SIGTERM while validating: exit 75 within seconds, validated verdicts kept, --resume asks only the rest")
    func sigtermWhileValidating() async throws {
        try await Harness.with(extra: Self.patientHTTP) { h in
            let ids = try await h.seedChanging(prefix: "k", count: 30)
            await h.revenueCat.setLatency(.milliseconds(200))
            let (process, stderr) = try SubreconBinary.start(
                runArguments(h, ["--concurrency", "2"]), environment: h.env.values, directory: h.reportDirectory)
            try await waitFor(process, "8 requests reached RevenueCat") { await h.revenueCat.counters().totalRequests >= 8 }
            kill(process.processIdentifier, SIGTERM)
            #expect(try await SubreconBinary.wait(process, limit: .seconds(15)) == 75)
            let log = try String(contentsOf: stderr, encoding: .utf8)
            #expect(!log.contains("before the run could end cleanly"), "stopped cleanly, not by the fallback exit")
            let runID = try await onlyRunID(h)
            let kept = try await ledgerUsers(h)
            #expect(kept.count >= 6 && kept.count < ids.count, "the verdicts validated before SIGTERM are in the ledger (\(kept.count))")
            #expect(try await h.count("select count(*)::int from reconcile_changes") == 0)
            await h.revenueCat.setLatency(.zero)
            try await resumeAndCheck(h, runID: runID, ids: ids, notAskedAgain: kept)
        }
    }

    @Test("SIGTERM while applying: the batch in progress commits, exit 75, --resume applies the rest once")
    func sigtermWhileApplying() async throws {
        try await Harness.with(extra: Self.patientLocks) { h in
            let ids = try await h.seedChanging(prefix: "k", count: 120)
            try await h.client.withConnection { locker in
                // Hold the audit table so the first apply batch waits inside its transaction.
                try await locker.query("begin", logger: h.logger)
                try await locker.query("lock table reconcile_changes in share mode", logger: h.logger)
                let (process, stderr) = try SubreconBinary.start(
                    runArguments(h, ["--concurrency", "8"]), environment: h.env.values, directory: h.reportDirectory)
                try await waitFor(process, "the apply phase reached its first batch (waiting on the lock)") {
                    try await h.count(
                        """
                        select count(*)::int from pg_stat_activity where datname = current_database() \
                        and wait_event_type = 'Lock' and query ilike '%reconcile_changes%'
                        """) > 0
                }
                kill(process.processIdentifier, SIGTERM)
                // The one timed wait left: the binary shows no sign of having taken SIGTERM until the batch it is
                // blocked in commits (nothing is logged before "run stopped"), so the lock is held a moment longer.
                try await Task.sleep(for: .milliseconds(300))
                try await locker.query("rollback", logger: h.logger)
                #expect(try await SubreconBinary.wait(process, limit: .seconds(15)) == 75)
                let log = try String(contentsOf: stderr, encoding: .utf8)
                #expect(!log.contains("before the run could end cleanly"), "stopped cleanly, not by the fallback exit")
            }
            let applied = try await h.count("select count(*)::int from reconcile_changes")
            #expect(applied > 0 && applied < ids.count, "stopped between apply batches (\(applied) applied)")
            let runID = try await onlyRunID(h)
            try await resumeAndCheck(h, runID: runID, ids: ids, notAskedAgain: Set(ids))
        }
    }

    @Test("kill -9 while validating, then --resume: every user reconciled once")
    func killedWhileValidating() async throws {
        try await Harness.with(extra: Self.patientHTTP) { h in
            let ids = try await h.seedChanging(prefix: "k", count: 30)
            await h.revenueCat.setLatency(.milliseconds(100))
            let (process, _) = try SubreconBinary.start(
                runArguments(h, ["--concurrency", "2"]), environment: h.env.values, directory: h.reportDirectory)
            try await waitFor(process, "10 requests reached RevenueCat") { await h.revenueCat.counters().totalRequests >= 10 }
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            #expect(process.terminationReason == .uncaughtSignal)
            let runID = try await onlyRunID(h)
            let kept = try await ledgerUsers(h)
            await h.revenueCat.setLatency(.zero)
            try await resumeAndCheck(h, runID: runID, ids: ids, notAskedAgain: kept)
        }
    }
}
