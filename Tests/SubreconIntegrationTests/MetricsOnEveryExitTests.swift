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

/// Every exit of `run` writes `--metrics-file` (and pushes) with that exit code (docs/CONTRACT.md, "Options of
/// `subrecon run`"), so an alert on the exit code fires for a night that failed at start or stopped; the last
/// success a good night recorded is kept.
@Suite("Metrics on every exit of run", .serialized, .enabled(if: Harness.isEnabled, Harness.skip), .timeLimit(.minutes(5)))
struct MetricsOnEveryExitTests {
    func arguments(_ h: Harness, metrics: URL, push: Bool = true, _ extra: [String] = []) -> [String] {
        [
            "run", "--as-of", ISO8601.string(Harness.asOf), "--apply-past", "--max-downgrade-ratio", "1", "--report-dir",
            h.reportDirectory.path, "--metrics-file", metrics.path,
        ] + (push ? ["--pushgateway-url", h.server.baseURL] : []) + extra
    }

    func metrics(_ file: URL) throws -> PrometheusTextParser { try PrometheusTextParser(try String(contentsOf: file, encoding: .utf8)) }

    @Test("after a good night, a 78 (a bad setting, a latest that is not ours), a 69 and a 64 each write and push their exit code")
    func failuresAtStart() async throws {
        let gateway = RecordingPushgateway()
        try await Harness.with(routes: [gateway]) { h in
            try await h.seed(h.row("x-1", tier: 1, "active", end: -2), Harness.subscription(expires: -2))
            let file = h.reportDirectory.appendingPathComponent("subrecon.prom")
            let good = try await BinaryRun.run(arguments(h, metrics: file), environment: h.env.values, directory: h.reportDirectory)
            #expect(good.status == 0, "\(good.operatorLines)")
            let lastSuccess = try #require(try metrics(file).value("subrecon_last_success_timestamp_seconds", ["shard": "0_1"]))

            var badSetting = h.env.values
            badSetting["SUBRECON_HTTP_TIMEOUT_SECONDS"] = "soon"
            var unreachable = h.env.values
            unreachable["DATABASE_URL"] = "postgres://postgres@127.0.0.1:1/subrecon?sslmode=disable"
            let latest = h.reportDirectory.appendingPathComponent("latest")
            let nights: [(String, [String: String], [String], Int32, () throws -> Void)] = [
                ("a bad setting", badSetting, [], 78, {}),
                (
                    "a directory named latest", h.env.values, [], 78,
                    {
                        try FileManager.default.removeItem(at: latest)
                        try FileManager.default.createDirectory(at: latest, withIntermediateDirectories: true)
                    }
                ),
                ("an unreachable database", unreachable, [], 69, {}),
                ("an --as-of a run that applies may not judge", h.env.values, ["--as-of", "2020-01-01T00:00:00Z"], 64, {}),
            ]
            for (what, environment, extra, code, prepare) in nights {
                try prepare()
                var args = arguments(h, metrics: file)
                if !extra.isEmpty { args = args.filter { $0 != "--apply-past" } + extra }
                let pushesBefore = await gateway.requests.count
                let run = try await BinaryRun.run(args, environment: environment, directory: h.reportDirectory)
                #expect(run.status == code, "\(what): \(run.operatorLines)")
                let written = try metrics(file)
                #expect(written.value("subrecon_run_exit_code", ["shard": "0_1"]) == Double(code), "\(what)")
                #expect(
                    written.value("subrecon_last_success_timestamp_seconds", ["shard": "0_1"]) == lastSuccess,
                    "\(what): the last success is kept")
                let pushes = await gateway.requests
                #expect(pushes.count == pushesBefore + 1, "\(what): pushed")
                #expect(
                    pushes.last.map { String(decoding: $0.body, as: UTF8.self) } == (try String(contentsOf: file, encoding: .utf8)),
                    "\(what): the same exposition pushed")
            }
        }
    }

    @Test("a usage error in the options (out of range, a bad --shard, a refused combination) is 64 with its metrics written")
    func usageErrors() async throws {
        let gateway = RecordingPushgateway()
        try await Harness.with(routes: [gateway]) { h in
            let file = h.reportDirectory.appendingPathComponent("subrecon.prom")
            let cases: [(String, [String], String, Bool)] = [
                ("--concurrency 0", ["--concurrency", "0"], "0_1", true),
                ("--max-downgrade-ratio 2 on shard 1/2", ["--max-downgrade-ratio", "2", "--shard", "1/2"], "1_2", true),
                ("a malformed --shard (read as 0/1)", ["--shard", "3/2"], "0_1", true),
                ("--resume of a dry run", ["--dry-run", "--resume", "20260101T000000Z-s0of1-abc"], "0_1", true),
                ("--end-after without backfill", ["--end-after", "2026-01-01T00:00:00Z"], "0_1", true),
                ("a --pushgateway-url carrying credentials (not pushed to)", [], "0_1", false),
            ]
            for (what, extra, shard, push) in cases {
                try? FileManager.default.removeItem(at: file)
                var args = arguments(h, metrics: file, push: push) + extra
                if !push { args += ["--pushgateway-url", "http://ops:secret@127.0.0.1:9/"] }
                let pushesBefore = await gateway.requests.count
                let run = try await BinaryRun.run(args, environment: h.env.values, directory: h.reportDirectory)
                #expect(run.status == 64, "\(what): \(run.stderr)")
                #expect(try metrics(file).value("subrecon_run_exit_code", ["shard": shard]) == 64, "\(what)")
                #expect(await gateway.requests.count == pushesBefore + (push ? 1 : 0), "\(what): pushed when the URL is valid")
            }
            #expect(try await h.count("select count(*)::int from reconcile_runs") == 0, "nothing recorded")
        }
    }

    @Test("a run stopped by SIGTERM (75) writes its exit code; the resumed run writes 0")
    func stopped() async throws {
        // A patient request timeout: under load the harness's 2 s timeout could judge RevenueCat down, and the stop
        // would then be measured against a source-down wait instead of the in-flight users.
        try await Harness.with(extra: SignalTests.patientHTTP) { h in
            _ = try await h.seedChanging(prefix: "s", count: 30)
            await h.revenueCat.setLatency(.milliseconds(200))
            let file = h.reportDirectory.appendingPathComponent("subrecon.prom")
            let (process, _) = try SubreconBinary.start(
                arguments(h, metrics: file, push: false, ["--concurrency", "2"]), environment: h.env.values, directory: h.reportDirectory)
            let deadline = ContinuousClock.now + .seconds(30)
            while await h.revenueCat.counters().totalRequests < 6 && process.isRunning && ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(10))
            }
            kill(process.processIdentifier, SIGTERM)
            #expect(try await SubreconBinary.wait(process, limit: .seconds(40)) == 75)
            #expect(try metrics(file).value("subrecon_run_exit_code", ["shard": "0_1"]) == 75)

            await h.revenueCat.setLatency(.zero)
            var runID: String?
            for try await id in try await h.client.query("select id from reconcile_runs").decode(String.self) { runID = id }
            let resumed = try await BinaryRun.run(
                ["run", "--resume", try #require(runID), "--report-dir", h.reportDirectory.path, "--metrics-file", file.path],
                environment: h.env.values, directory: h.reportDirectory)
            #expect(resumed.status == 0, "\(resumed.operatorLines)")
            #expect(try metrics(file).value("subrecon_run_exit_code", ["shard": "0_1"]) == 0)
        }
    }

    @Test("a dry run stopped by SIGTERM has nothing to resume: 143, never 75, no --resume; its metrics say 143")
    func stoppedDryRun() async throws {
        try await Harness.with(extra: SignalTests.patientHTTP) { h in
            _ = try await h.seedChanging(prefix: "d", count: 30)
            await h.revenueCat.setLatency(.milliseconds(200))
            let file = h.reportDirectory.appendingPathComponent("subrecon.prom")
            let (process, err) = try SubreconBinary.start(
                arguments(h, metrics: file, push: false, ["--concurrency", "2", "--dry-run"]), environment: h.env.values,
                directory: h.reportDirectory)
            let deadline = ContinuousClock.now + .seconds(30)
            while await h.revenueCat.counters().totalRequests < 6 && process.isRunning && ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(10))
            }
            kill(process.processIdentifier, SIGTERM)
            #expect(try await SubreconBinary.wait(process, limit: .seconds(40)) == 143)
            let stderr = try String(contentsOf: err, encoding: .utf8)
            #expect(!stderr.contains("--resume") && stderr.contains("nothing to resume"), "\(stderr)")
            #expect(try metrics(file).value("subrecon_run_exit_code", ["shard": "0_1"]) == 143)
        }
    }

    @Test("a run that cannot end cleanly (blocked in its apply) is forced out by a second SIGTERM: its metrics say 75 too")
    func forcedExit() async throws {
        let gateway = RecordingPushgateway()
        try await Harness.with(routes: [gateway]) { h in
            _ = try await h.seedChanging(prefix: "f", count: 40)
            let file = h.reportDirectory.appendingPathComponent("subrecon.prom")
            try await h.client.withConnection { locker in
                // Hold the audit table so the first apply batch waits inside its transaction.
                try await locker.query("begin", logger: h.logger)
                try await locker.query("lock table reconcile_changes in share mode", logger: h.logger)
                let (process, err) = try SubreconBinary.start(
                    arguments(h, metrics: file, ["--concurrency", "8"]), environment: h.env.values, directory: h.reportDirectory)
                let deadline = ContinuousClock.now + .seconds(30)
                while process.isRunning && ContinuousClock.now < deadline {
                    let waiting = try await h.count(
                        """
                        select count(*)::int from pg_stat_activity where datname = current_database() \
                        and wait_event_type = 'Lock' and query ilike '%reconcile_changes%'
                        """)
                    if waiting > 0 { break }
                    try await Task.sleep(for: .milliseconds(10))
                }
                kill(process.processIdentifier, SIGTERM)
                try await Task.sleep(for: .milliseconds(200))
                kill(process.processIdentifier, SIGTERM)
                let status = try await SubreconBinary.wait(process, limit: .seconds(15))
                try await locker.query("rollback", logger: h.logger)
                #expect(status == 75)
                #expect(try String(contentsOf: err, encoding: .utf8).contains("before the run could end cleanly"), "the forced exit")
            }
            #expect(try metrics(file).value("subrecon_run_exit_code", ["shard": "0_1"]) == 75)
            let pushed = await gateway.requests.last.map { String(decoding: $0.body, as: UTF8.self) }
            #expect(pushed == (try String(contentsOf: file, encoding: .utf8)), "the same exposition pushed")
        }
    }
}
