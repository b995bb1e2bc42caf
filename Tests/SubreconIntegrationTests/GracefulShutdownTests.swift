import Foundation
import Logging
import PostgresNIO
import ServiceLifecycleTestKit
import StoreSimulator
import SubreconApp
import SubreconCore
import SubreconJob
import SubreconPorts
import SubreconTestKit
import SubreconTestSupport
import Testing

/// The job runs beside its PostgreSQL client in a swift-service-lifecycle `ServiceGroup`. A graceful
/// shutdown of a host's group around `Commands.run` (what SIGTERM is to the binary) stops the run between steps:
/// exit 75, the verdicts already validated kept, and `--resume` asks only the rest.
@Suite(
    "Graceful shutdown through swift-service-lifecycle", .serialized, .enabled(if: Harness.isEnabled, Harness.skip),
    .timeLimit(.minutes(3)))
struct GracefulShutdownTests {
    @Test("a host's graceful shutdown while validating: stopped (75), validated verdicts kept, --resume asks only the rest")
    func gracefulShutdownWhileValidating() async throws {
        try await Harness.with { h in
            let ids = try await h.seedChanging(prefix: "g", count: 30)
            await h.revenueCat.setLatency(.milliseconds(200))
            let outcome: Result<RunResult, any Error> = await testGracefulShutdown { trigger in
                async let run: Result<RunResult, any Error> = {
                    do {
                        return .success(
                            try await h.run {
                                $0.concurrency = 2
                                $0.maxDowngradeRatio = 1
                            })
                    } catch {
                        return .failure(error)
                    }
                }()
                for _ in 0..<500 where await h.revenueCat.counters().totalRequests < 8 { try? await Task.sleep(for: .milliseconds(20)) }
                trigger.triggerGracefulShutdown()
                return await run
            }
            switch outcome {
            case .success(let result): Issue.record("the run should have stopped, ended \(result.exitStatus)")
            case .failure(let error):
                let failure = try #require(error as? CommandFailure)
                #expect(failure.status == .stopped)
                #expect(failure.description.contains("graceful shutdown requested"))
            }
            var kept = Set<String>()
            for try await id in try await h.client.query("select user_id from reconcile_verdicts").decode(String.self) { kept.insert(id) }
            #expect(
                kept.count >= 6 && kept.count < ids.count, "the verdicts validated before the shutdown are in the ledger (\(kept.count))")
            #expect(try await h.count("select count(*)::int from reconcile_changes") == 0)
            var runIDs: [String] = []
            for try await id in try await h.client.query("select id from reconcile_runs").decode(String.self) { runIDs.append(id) }
            let runID = try #require(runIDs.first)
            #expect(runIDs.count == 1)

            await h.revenueCat.setLatency(.zero)
            let askedBefore = await h.revenueCat.counters().requestsPerUser
            let resumed = try await Commands.run(environment: h.env, options: h.options(), logger: h.logger, resume: runID)
            #expect(resumed.exitStatus == .ok)
            let asked = await h.revenueCat.counters().requestsPerUser
            for id in kept { #expect(asked[id] == askedBefore[id], "\(id) validated before the shutdown is not asked again") }
            #expect(try await h.count("select count(*)::int from reconcile_verdicts") == ids.count, "one verdict per user")
            for id in ids { #expect(try await h.auditRows(id) == 1, "one audit row for \(id)") }
        }
    }

    @Test("a run against a schema never migrated is still exit 78 once the job runs inside the ServiceGroup")
    func unmigratedSchemaIsConfiguration() async throws {
        try await TestDatabase.withSchema(prefix: "gs_") { schema in
            let env = ProcessEnvironment(["DATABASE_URL": schema.databaseURL, "REVENUECAT_API_KEY": "sk_test_unused"])
            var options = RunOptions(asOf: Harness.asOf, reportDirectory: FileManager.default.temporaryDirectory)
            options.dryRun = true
            await #expect {
                _ = try await Commands.run(environment: env, options: options, logger: Logger(label: "gs"))
            } throws: { error in
                (error as? CommandFailure)?.status == .config
            }
        }
    }

    @Test("a second SIGINT while the first stop is held up exits 75 at once, with the fallback line naming the signal")
    func secondSignalExitsAtOnce() async throws {
        try await Harness.with { h in
            _ = try await h.seedChanging(prefix: "q", count: 20)
            await h.revenueCat.setLatency(.milliseconds(500))
            let arguments = [
                "run", "--as-of", ISO8601.string(Harness.asOf), "--apply-past", "--concurrency", "2", "--report-dir",
                h.reportDirectory.path,
            ]
            let (process, stderr) = try SubreconBinary.start(arguments, environment: h.env.values, directory: h.reportDirectory)
            _ = try await TestPoll.until(seconds: 30) {
                if !process.isRunning { return true }
                return await h.revenueCat.counters().totalRequests >= 2
            }
            try await h.client.withConnection { locker in
                // Hold the run table so the clean stop cannot write the run's status: only the second signal ends it.
                try await locker.query("begin", logger: h.logger)
                try await locker.query("lock table reconcile_runs in access exclusive mode", logger: h.logger)
                kill(process.processIdentifier, SIGINT)
                try await Task.sleep(for: .milliseconds(700))
                kill(process.processIdentifier, SIGINT)
                #expect(try await SubreconBinary.wait(process, limit: .seconds(8)) == 75)
                try await locker.query("rollback", logger: h.logger)
            }
            let log = try String(contentsOf: stderr, encoding: .utf8)
            #expect(log.contains("stopped by SIGINT before the run could end cleanly"))
        }
    }
}
