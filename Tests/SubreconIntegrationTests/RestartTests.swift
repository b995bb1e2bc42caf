import Foundation
import PostgresNIO
import StoreSimulator
import SubreconJob
import SubreconPorts
import SubreconTestKit
import Testing

/// A PostgreSQL cluster of a suite's own (`scripts/pg-start` in a temporary directory, a free port), which the
/// suite may restart (`scripts/pg-restart`) without disturbing the suites that share the test database.
final class OwnCluster: Sendable {
    let directory: URL
    let url: String

    static let scripts = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("scripts")

    struct ScriptFailed: Error, CustomStringConvertible {
        let description: String
    }

    init() async throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("subrecon-own-pg-\(UUID().uuidString.prefix(8))")
        url = try await Self.script("pg-start", [directory.path, String(try Self.freePort())])
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// `pg_ctl restart -m fast` (every session ended at once), the server down for `down` seconds in between.
    func restart(down seconds: Int = 0) async throws { _ = try await Self.script("pg-restart", [directory.path, String(seconds)]) }

    func stop() async { _ = try? await Self.script("pg-stop", [directory.path]) }

    /// Runs `scripts/NAME ARGUMENTS`; its standard output, or `ScriptFailed` with its standard error. The output goes
    /// through files, not pipes, which the server `pg_ctl` leaves running would hold open.
    static func script(_ name: String, _ arguments: [String]) async throws -> String {
        let stamp = UUID().uuidString.prefix(8)
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("own-cluster-\(stamp).out")
        let err = FileManager.default.temporaryDirectory.appendingPathComponent("own-cluster-\(stamp).err")
        defer {
            try? FileManager.default.removeItem(at: out)
            try? FileManager.default.removeItem(at: err)
        }
        _ = FileManager.default.createFile(atPath: out.path, contents: nil)
        _ = FileManager.default.createFile(atPath: err.path, contents: nil)
        let process = Process()
        // The scripts start the server without the descriptors they inherited (scripts/pg-start's owner_detached):
        // Foundation learns that a child ended when a descriptor it shares with it closes, and a server holding it
        // would hide the script's end. Closing it at the script's start instead makes Foundation wait for the script
        // right then (it waits for a child once that descriptor closes), deaf to every other child ending meanwhile.
        process.executableURL = scripts.appendingPathComponent(name)
        process.arguments = arguments
        process.standardOutput = try FileHandle(forWritingTo: out)
        process.standardError = try FileHandle(forWritingTo: err)
        process.standardInput = FileHandle.nullDevice
        try process.run()
        // Polled, as `SubreconBinary.wait` does: `waitUntilExit` from a task can wait forever for an exit it missed.
        guard try await TestPoll.until(seconds: 120, { !process.isRunning }) else {
            kill(process.processIdentifier, SIGKILL)
            throw ScriptFailed(description: "scripts/\(name) still running after 120 s; killed")
        }
        guard process.terminationStatus == 0 else {
            throw ScriptFailed(
                description: "scripts/\(name) exited \(process.terminationStatus): \((try? String(contentsOf: err, encoding: .utf8)) ?? "")"
            )
        }
        return try String(contentsOf: out, encoding: .utf8)
    }

    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(fd, pointer, length) == 0 && getsockname(fd, pointer, &length) == 0
            }
        }
        guard bound else { throw ScriptFailed(description: "no free port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}

/// The database restarting under a running job (CONTRACT "What `run` checks first": every database wait has a
/// deadline; a run that lost its database ends with exit 75 naming its run id, and `--resume` finishes it). Each
/// round restarts a cluster of the suite's own while the real binary validates or applies; `ROUNDS` rounds each,
/// enough to catch a hang that happens one time in several (`SUBRECON_TEST_RESTART_ROUNDS` raises it).
@Suite("A database restart under the real binary", .serialized, .enabled(if: Harness.isEnabled, Harness.skip), .timeLimit(.minutes(8)))
struct RestartTests {
    static let rounds = ProcessInfo.processInfo.environment["SUBRECON_TEST_RESTART_ROUNDS"].flatMap { Int($0) } ?? 2
    /// How long the binary may take to end once its database went away: the restart itself, then the deadline of
    /// the wait it was in (the lock's connection is watched, so it is told at once) — seconds, not minutes.
    static let endWithin: Duration = .seconds(30)

    let stops = SignalTests()

    /// Runs `body` with a harness on a fresh cluster of this suite's own, stopped afterwards.
    func withOwnCluster(_ body: (Harness, OwnCluster) async throws -> Void) async throws {
        let cluster = try await OwnCluster()
        do {
            try await Harness.with(extra: SignalTests.patientLocks, serverURL: cluster.url) { h in try await body(h, cluster) }
        } catch {
            await cluster.stop()
            throw error
        }
        await cluster.stop()
    }

    /// The binary ended by itself, with 75, and its last line names the run id to resume (not a placeholder).
    func expectStoppedNamingRun(_ h: Harness, _ process: Process, stderr: URL, round: Int) async throws -> String? {
        let status = try await SubreconBinary.wait(process, limit: Self.endWithin)
        #expect(status == 75, "round \(round): ended with 75 within \(Self.endWithin) (nil: still running, killed)")
        let log = try String(contentsOf: stderr, encoding: .utf8)
        let runID = try await stops.onlyRunID(h)
        let lines = log.split(separator: "\n").map(String.init)
        let last = lines.last ?? ""
        if status != 75 {
            let tail = lines.suffix(60).joined(separator: "\n")
            Issue.record("round \(round): the binary's last lines:\n\(tail)")
        }
        #expect(last.contains("--resume \(runID)"), "round \(round): the last line names the run to resume: \(last)")
        #expect(!log.contains("RUN_ID"), "round \(round): no placeholder for the run id")
        // A database that came back within seconds lets the run end by itself; the forced exit after the stop grace
        // is for one that stays away (`databaseStaysAway`), and here would hide a hang.
        #expect(!log.contains("before the run could end cleanly"), "round \(round): stopped cleanly, not by the fallback exit")
        return status == 75 ? runID : nil
    }

    @Test("a restart while validating: exit 75 within seconds naming the run, --resume reconciles everyone once")
    func restartWhileValidating() async throws {
        for round in 1...Self.rounds {
            try await withOwnCluster { h, cluster in
                let ids = try await h.seedChanging(prefix: "v", count: 24)
                await h.revenueCat.setLatency(.milliseconds(100))
                let (process, stderr) = try SubreconBinary.start(
                    stops.runArguments(h, ["--concurrency", "2"]), environment: h.env.values, directory: h.reportDirectory)
                try await stops.waitFor(process, "6 requests reached RevenueCat") { await h.revenueCat.counters().totalRequests >= 6 }
                try await cluster.restart(down: round % 2)
                guard let runID = try await expectStoppedNamingRun(h, process, stderr: stderr, round: round) else { return }
                await h.revenueCat.setLatency(.zero)
                let kept = try await stops.ledgerUsers(h)
                try await stops.resumeAndCheck(h, runID: runID, ids: ids, notAskedAgain: kept)
            }
        }
    }

    @Test("a database that goes away and stays away: the run still ends with 75 within seconds, naming the run")
    func databaseStaysAway() async throws {
        try await withOwnCluster { h, cluster in
            _ = try await h.seedChanging(prefix: "d", count: 24)
            await h.revenueCat.setLatency(.milliseconds(100))
            let (process, stderr) = try SubreconBinary.start(
                stops.runArguments(h, ["--concurrency", "2"]), environment: h.env.values, directory: h.reportDirectory)
            try await stops.waitFor(process, "6 requests reached RevenueCat") { await h.revenueCat.counters().totalRequests >= 6 }
            // Down for 60 s: longer than the run may wait once it lost its lock (its stop grace, 20 s).
            let restart = Task { try await cluster.restart(down: 60) }
            let status = try await SubreconBinary.wait(process, limit: .seconds(50))
            try await restart.value
            #expect(status == 75, "ended with 75 while the database was still away (nil: still running after 50 s, killed)")
            let lines = try String(contentsOf: stderr, encoding: .utf8).split(separator: "\n").map(String.init)
            if status != 75 { Issue.record("the binary's last lines:\n\(lines.suffix(40).joined(separator: "\n"))") }
            let runID = try await stops.onlyRunID(h)
            #expect(lines.last?.contains("--resume \(runID)") == true, "the last line names the run: \(lines.suffix(5))")
        }
    }

    @Test("a restart while applying: the batch in flight rolls back, exit 75 naming the run, --resume applies each change once")
    func restartWhileApplying() async throws {
        for round in 1...Self.rounds {
            try await withOwnCluster { h, cluster in
                let ids = try await h.seedChanging(prefix: "a", count: 40)
                let (process, stderr) = try await h.client.withConnection { locker in
                    // Hold the audit table so the first apply batch waits inside its transaction; the restart ends both.
                    try await locker.query("begin", logger: h.logger)
                    try await locker.query("lock table reconcile_changes in share mode", logger: h.logger)
                    let (process, stderr) = try SubreconBinary.start(
                        stops.runArguments(h, ["--concurrency", "8"]), environment: h.env.values, directory: h.reportDirectory)
                    try await stops.waitFor(process, "the apply phase reached its first batch (waiting on the lock)") {
                        try await h.count(
                            """
                            select count(*)::int from pg_stat_activity where datname = current_database() \
                            and wait_event_type = 'Lock' and query ilike '%reconcile_changes%'
                            """) > 0
                    }
                    try await cluster.restart(down: round % 2)
                    return (process, stderr)
                }
                guard let runID = try await expectStoppedNamingRun(h, process, stderr: stderr, round: round) else { return }
                #expect(try await h.count("select count(*)::int from reconcile_changes") == 0, "the batch in flight rolled back")
                try await stops.resumeAndCheck(h, runID: runID, ids: ids, notAskedAgain: Set(ids))
            }
        }
    }
}
