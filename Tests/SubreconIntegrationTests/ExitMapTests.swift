import Foundation
import PostgresNIO
import StoreSimulator
import SubreconApp
import SubreconCore
import SubreconDatabase
import SubreconJob
import SubreconPorts
import SubreconReports
import Testing

/// A non-dry run judges the present, and every failure after start has one exit code.
@Suite("As-of guard and the exit map", .serialized, .enabled(if: Harness.isEnabled, Harness.skip), .timeLimit(.minutes(3)))
struct ExitMapTests {
    func runCount(_ h: Harness) async throws -> Int { try await h.count("select count(*)::int from reconcile_runs") }

    func failure(_ body: () async throws -> RunResult) async -> CommandFailure? {
        do {
            let result = try await body()
            Issue.record("expected a failure, the run ended \(result.exitStatus)")
            return nil
        } catch let failure as CommandFailure {
            return failure
        } catch {
            Issue.record("expected a CommandFailure, got \(error)")
            return nil
        }
    }

    @Test("the database's failures map at the composition root: 69 for one it answered or refused, 78 for the schema")
    func databaseFailures() {
        #expect(ExitStatus.failure(DatabaseError.database(operation: "list products", reason: "timeout")).status == .unavailable)
        #expect(ExitStatus.failure(DatabaseError.rejected(endpoint: "db", reason: "no such role")).status == .unavailable)
        #expect(ExitStatus.failure(DatabaseError.schemaOutdated(current: 1, required: 2)).status == .config)
        #expect(ExitStatus.failure(DatabaseError.database(operation: "x", reason: "y")).line.hasSuffix("; nothing done"))
    }

    @Test("--as-of more than 24 h back or 15 min ahead, without --dry-run or --apply-past, exits 64 before anything is touched")
    func asOfGuard() async throws {
        try await Harness.with { h in
            try await h.seed(h.row("g-1", tier: 1, "active", end: -2), Harness.subscription(expires: -2))
            let now = Date()
            for asOf in [now.addingTimeInterval(-30 * 86_400), now.addingTimeInterval(-86_400 - 60), now.addingTimeInterval(16 * 60)] {
                let refused = await failure {
                    try await Commands.run(
                        environment: h.env,
                        options: h.options {
                            $0.asOf = asOf
                            $0.applyPast = false
                        }, logger: h.logger, now: now)
                }
                #expect(refused?.status == .usage)
                #expect(refused?.description.contains("--apply-past") == true && refused?.description.contains("--dry-run") == true)
            }
            #expect(try await runCount(h) == 0, "nothing touched")
            #expect(!FileManager.default.fileExists(atPath: h.reportDirectory.appendingPathComponent("latest").path))
            #expect(try await h.user("g-1")?.currentTier == 1)

            // A dry run may look at any instant; a run that judges the present needs neither flag.
            let dry = try await Commands.run(
                environment: h.env,
                options: h.options {
                    $0.asOf = now.addingTimeInterval(-30 * 86_400)
                    $0.applyPast = false
                    $0.dryRun = true
                    $0.maxDowngradeRatio = 1
                },
                logger: h.logger, now: now)
            #expect(dry.exitStatus == .ok)
            #expect(try await h.user("g-1")?.currentTier == 1, "a dry run changes nothing")
            let near = try await Commands.run(
                environment: h.env,
                options: h.options {
                    $0.asOf = now.addingTimeInterval(-3600)
                    $0.applyPast = false
                    $0.maxDowngradeRatio = 1
                },
                logger: h.logger, now: now)
            #expect(near.exitStatus == .ok)
            #expect(try await h.user("g-1")?.currentTier == 0, "the present is applied")
        }
    }

    @Test("--resume and --accept-downgrades of a run whose verdicts are older than 24 h exit 64 naming a new run")
    func oldVerdictsRefused() async throws {
        try await Harness.with { h in
            try await h.seed(h.row("o-1", tier: 1, "active", end: -2), Harness.subscription(expires: -2))
            let started = Date().addingTimeInterval(-25 * 3600)
            let tripped = try await Commands.run(
                environment: h.env, options: h.options { $0.maxDowngradeRatio = 0 }, logger: h.logger, now: started)
            #expect(tripped.exitStatus == .valveTripped)
            let runID = tripped.summary.runID
            for accept in [false, true] {
                let refused = await failure {
                    try await Commands.run(
                        environment: h.env, options: h.options { $0.acceptDowngrades = accept }, logger: h.logger, resume: runID)
                }
                #expect(refused?.status == .usage)
                #expect(refused?.description.contains("new run") == true, "\(refused?.description ?? "")")
            }
            #expect(try await h.user("o-1")?.currentTier == 1, "old verdicts never applied")

            // The same run, judged an hour after it started, is still accepted.
            let accepted = try await Commands.run(
                environment: h.env, options: h.options { $0.acceptDowngrades = true }, logger: h.logger, resume: runID,
                now: started.addingTimeInterval(3600))
            #expect(accepted.exitStatus == .ok)
            #expect(try await h.user("o-1")?.currentTier == 0)
        }
    }

    @Test(
        "a run folder that cannot be written is exit 78 before anything is touched; other failures with nothing to resume are 69, never 75 or 1"
    )
    func bookkeepingFailures() async throws {
        try await Harness.with { h in
            try await h.seed(h.row("b-1", tier: 1, "active", end: -2), Harness.subscription(expires: -2))
            let file = h.reportDirectory.appendingPathComponent("not-a-directory")
            try Data("x".utf8).write(to: file)
            let refused = await failure {
                try await Commands.run(
                    environment: h.env, options: h.options { $0.reportDirectory = file.appendingPathComponent("reports") }, logger: h.logger
                )
            }
            #expect(refused?.status == .config)
            #expect(try await runCount(h) == 0)
        }
        struct DiskFull: Error {}
        #expect(ExitStatus.failure(DiskFull()).status == .unavailable)
        #expect(ExitStatus.failure(CancellationError()).status == .unavailable)
        #expect(ExitStatus.failure(ConfigError("X", "is bad")).status == .config)
        #expect(ExitStatus.failure(CommandFailure(.shardLocked, "held")).status == .shardLocked)
        #expect(ExitStatus.failure(DatabaseError.database(operation: "record verdicts", reason: "gone")).status == .unavailable)
    }

    @Test("runs whose shards overlap cannot run at once (0/1 or 0/2 beside 0/4: exit 4); 0/4 beside 1/4 can")
    func overlappingShards() async throws {
        try await Harness.with { h in
            try await h.seed(h.row("s-1", tier: 1, "active", end: -2), Harness.subscription(expires: -2))
            let held: [String]? = try await h.db.withShardLock(shard: ShardSpec(index: 0, count: 4)) {
                var outcomes: [String] = []
                for shard in [ShardSpec.all, ShardSpec(index: 0, count: 2), ShardSpec(index: 0, count: 4), ShardSpec(index: 1, count: 4)] {
                    do {
                        let result = try await h.run {
                            $0.shard = shard
                            $0.maxDowngradeRatio = 1
                        }
                        outcomes.append("\(shard)=\(result.exitStatus.rawValue)")
                    } catch let failure as CommandFailure {
                        outcomes.append("\(shard)=\(failure.status.rawValue)")
                    }
                }
                return outcomes
            }
            #expect(held == ["0/1=4", "0/2=4", "0/4=4", "1/4=0"])
            // Free again once the 0/4 run is gone.
            let after = try await h.run { $0.maxDowngradeRatio = 1 }
            #expect(after.exitStatus == .ok)
        }
    }

    @Test("losing the shard lock's connection stops the run (75); --resume finishes it, everyone reconciled once")
    func lockLost() async throws {
        try await Harness.with { h in
            var ids: [String] = []
            for n in 0..<12 {
                let id = String(format: "l-%02d", n)
                ids.append(id)
                try await h.seed(h.row(id, tier: 1, "active", end: -2), Harness.subscription(expires: -2))
            }
            await h.revenueCat.setLatency(.milliseconds(300))
            let run = Task {
                try await h.run {
                    $0.maxDowngradeRatio = 1
                    $0.concurrency = 1
                    $0.tuning.ledgerBatchSize = 2
                }
            }
            // Wait until the run is under way (it holds the lock and asks the sources), then end the lock's connection.
            for _ in 0..<400 where await h.revenueCat.counters().totalRequests == 0 {
                try await Task.sleep(for: .milliseconds(25))
            }
            var terminated = false
            for _ in 0..<200 where !terminated {
                try await Task.sleep(for: .milliseconds(50))
                terminated =
                    try await h.count(
                        """
                        select count(pg_terminate_backend(pid))::int from pg_locks where locktype = 'advisory' and granted \
                        and classid = (hashtext('subrecon.shard:' || current_schema())::bigint & 4294967295)::oid
                        """) > 0
            }
            #expect(terminated)
            switch await run.result {
            case .success(let result): Issue.record("the run should have stopped, ended \(result.exitStatus)")
            case .failure(let error):
                let failure = try #require(error as? CommandFailure)
                #expect(failure.status == .stopped)
                #expect(failure.description.contains("lost the shard lock"), "\(failure.description)")
            }
            let runID = try #require(
                try await h.client.query("select id from reconcile_runs").decode(String.self).first { _ in true })
            await h.revenueCat.setLatency(.zero)
            let resumed = try await Commands.run(
                environment: h.env, options: h.options(), logger: h.logger, resume: runID)
            #expect(resumed.exitStatus == .ok)
            #expect(try await h.count("select count(*)::int from reconcile_verdicts") == ids.count)
            for id in ids {
                #expect(try await h.auditRows(id) == 1)
                #expect(try await h.intents(id) <= 1)
            }
        }
    }
}
