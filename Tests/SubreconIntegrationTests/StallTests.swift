import AsyncHTTPClient
import Foundation
import PostgresNIO
import StoreSimulator
import SubreconApp
import SubreconCore
import SubreconDatabase
import SubreconJob
import SubreconPorts
import SubreconReports
import Synchronization
import Testing

/// Nothing stalls the night. A peer trickling its body, a row held by another writer, a user
/// whose lookups never end and a stop in the middle each leave the run finishing (or stopping) on time, with
/// everyone else applied and every user reconciled once.
@Suite("Nothing stalls the night", .serialized, .enabled(if: Harness.isEnabled, Harness.skip), .timeLimit(.minutes(3)))
struct StallTests {
    @Test(
        "a trickling RevenueCat body and a row held FOR UPDATE: the run finishes, they are fetch_error and concurrent_update, the rest applied, exit 1"
    )
    func trickleAndHeldRow() async throws {
        try await Harness.with { h in
            let ordinary = try await h.seedChanging(prefix: "u")
            try await h.seed(h.row("m-trickle", tier: 1, "active", end: -2), Harness.subscription(expires: -2))
            await h.revenueCat.setFault(.trickle(pause: .milliseconds(400)), for: "m-trickle")
            try await h.seed(h.row("m-held", tier: 1, "active", end: -2), Harness.subscription(purchased: -2, expires: 28))
            let heldBefore = try #require(try await h.user("m-held"))

            // A webhook's transaction holds m-held's row for the whole run.
            let result = try await h.client.withConnection { holder in
                try await holder.query("begin", logger: h.logger)
                try await holder.query("select id from users where id = 'm-held' for update", logger: h.logger)
                let result = try await h.run { $0.maxDowngradeRatio = 1 }
                try await holder.query("rollback", logger: h.logger)
                return result
            }

            #expect(result.exitStatus == .userErrors)
            let report = try h.report(result)
            let trickled = try #require(report["m-trickle"])
            #expect(trickled.drift.contains("fetch_error") && !trickled.applied)
            let held = try #require(report["m-held"])
            #expect(held.drift.contains("concurrent_update") && !held.applied)
            for id in ordinary {
                #expect(report[id]?.applied == true, "\(id) applied")
                #expect(try await h.auditRows(id) == 1)
            }
            #expect(try await h.user("m-held") == heldBefore, "the held row is untouched")
            #expect(try await h.auditRows("m-held") == 0)
            #expect(try await h.user("m-trickle")?.currentTier == 1, "no tier change on a fetch error")
            #expect(try await h.auditRows("m-trickle") == 0)
        }
    }

    @Test("a user whose lookups outlast the per-user deadline ends as fetch_error naming it; the run finishes")
    func perUserDeadline() async throws {
        try await Harness.with(extra: ["SUBRECON_HTTP_TIMEOUT_SECONDS": "30"]) { h in
            let ordinary = try await h.seedChanging(prefix: "u", count: 3)
            try await h.seed(h.row("m-slow", tier: 1, "active", end: -2), Harness.subscription(expires: -2))
            await h.revenueCat.setFault(.trickle(pause: .milliseconds(300)), for: "m-slow")
            let result = try await h.run {
                $0.maxDowngradeRatio = 1
                // Ample for the ordinary users on a loaded machine; the trickled body needs minutes.
                $0.userDeadline = .seconds(5)
            }
            #expect(result.exitStatus == .userErrors)
            let report = try h.report(result)
            let slow = try #require(report["m-slow"])
            #expect(slow.drift.contains("fetch_error") && !slow.applied)
            #expect(slow.error?.contains("per-user deadline") == true, "\(slow.error ?? "no error")")
            for id in ordinary { #expect(report[id]?.applied == true) }
        }
    }

    @Test("a run stopped while its first user is stuck keeps the later verdicts; --resume asks only the stuck user")
    func stopBehindStuckHead() async throws {
        try await Harness.with { h in
            try await h.seed(h.row("a-00", tier: 1, "active", end: -2), Harness.subscription(expires: -2))
            await h.revenueCat.setFault(.trickle(pause: .milliseconds(500)), for: "a-00")
            var others: [String] = []
            for n in 1..<10 {
                let id = String(format: "a-%02d", n)
                others.append(id)
                try await h.seed(h.row(id, tier: 1, "active", end: -2), Harness.subscription(purchased: -2, expires: 28))
            }
            let stop = StopSignal()
            let run = Task {
                try await h.run {
                    $0.maxDowngradeRatio = 1
                    $0.tuning.ledgerBatchSize = 1  // each verdict reaches the ledger as it is decided: the test waits on them
                    $0.stop = stop
                }
            }
            // Wait until everyone but the stuck head has a verdict in the ledger, then stop.
            try await waitUntil {
                try await h.count("select count(*)::int from reconcile_verdicts where user_id <> 'a-00'") == others.count
            }
            stop.stop(reason: "test stop")
            switch await run.result {
            case .success(let result): Issue.record("the run should have stopped, ended \(result.exitStatus)")
            case .failure(let error):
                let failure = try #require(error as? CommandFailure)
                #expect(failure.status == .stopped)
                #expect(failure.description.contains("--resume"))
            }
            let runID = try #require(try await runIDs(h).first)
            #expect(try await h.count("select count(*)::int from reconcile_verdicts where user_id <> 'a-00'") == others.count)
            #expect(try await h.count("select count(*)::int from reconcile_verdicts where user_id = 'a-00'") == 0)
            #expect(try await h.count("select count(*)::int from reconcile_changes") == 0, "nothing applied before validation ended")

            await h.revenueCat.clearFaults()
            let askedBefore = await h.revenueCat.counters().requestsPerUser
            let resumed = try await Commands.run(environment: h.env, options: h.options(), logger: h.logger, resume: runID)
            #expect(resumed.exitStatus == .ok)
            #expect(resumed.summary.candidates == 10)
            let asked = await h.revenueCat.counters().requestsPerUser
            for id in others { #expect(asked[id] == askedBefore[id], "\(id) not asked again") }
            #expect((asked["a-00"] ?? 0) > (askedBefore["a-00"] ?? 0), "the stuck user is asked again")
            #expect(try await h.count("select count(*)::int from reconcile_verdicts") == 10, "every user reconciled once")
            for id in ["a-00"] + others {
                #expect(try await h.auditRows(id) == 1, "one audit row for \(id)")
                #expect(try await h.intents(id) <= 1)
            }
            #expect(try await h.user("a-00")?.currentTier == 0)
        }
    }

    @Test(
        "every transaction of the job sets statement_timeout, lock_timeout and idle_in_transaction_session_timeout from the environment; none outlives it"
    )
    func sessionTimeouts() async throws {
        try await Harness.with { h in
            var values = h.env.values
            values["SUBRECON_DB_STATEMENT_TIMEOUT_SECONDS"] = "7"
            values["SUBRECON_DB_LOCK_TIMEOUT_SECONDS"] = "1.5"
            let config = try SubreconConfiguration.load(ProcessEnvironment(values), requireSource: true)
            let connection = try await PostgresConnection.connect(
                configuration: try config.database.connectionConfiguration(), id: 9, logger: h.logger)
            func shown() async throws -> [String] {
                var shown: [String] = []
                for name in ["statement_timeout", "lock_timeout", "idle_in_transaction_session_timeout"] {
                    let rows = try await connection.query("select current_setting(\(name))", logger: h.logger)
                    for try await value in rows.decode(String.self) { shown.append(value) }
                }
                return shown
            }
            // As every unit of work of the job: set inside its transaction, not as startup parameters nor for the session.
            try await connection.query("begin", logger: h.logger)
            try await config.database.session.applyLocally(on: connection, logger: h.logger)
            let inside = try await shown()
            try await connection.query("commit", logger: h.logger)
            let after = try await shown()
            try await connection.close()
            #expect(inside == ["7s", "1500ms", "1min"])
            #expect(after == ["0", "0", "0"], "the server connection keeps none of them (a pooler hands it to others)")
            values["SUBRECON_DB_LOCK_TIMEOUT_SECONDS"] = "soon"
            #expect(throws: ConfigError.self) { try SubreconConfiguration.load(ProcessEnvironment(values), requireSource: true) }
        }
    }

    @Test("a stuck first user holds back neither the ledger nor the others; the scan runs at most reorderWindow users ahead of it")
    func stuckHeadDoesNotHoldTheLedger() async throws {
        try await Harness.with { h in
            var ids: [String] = []
            for n in 0..<12 {
                let id = String(format: "w-%02d", n)
                ids.append(id)
                try await h.seed(h.row(id, tier: 1, "active", end: -2), Harness.subscription(purchased: -2, expires: 28))
            }
            try await HTTPClientScope.with { http in
                let config = try SubreconConfiguration.load(h.env, requireSource: true)
                let stats = RequestStats()
                let real = try StoreFactSource(configuration: config, httpClient: http, stats: stats, logger: h.logger)

                // Window 4: while w-00 is stuck, only w-01...w-03 may be asked.
                let bounded = HeldFirstUser(inner: real, held: "w-00")
                let job = ReconcileJob(
                    ports: JobPorts(postgres: h.db), source: bounded, stats: stats, sourcesNote: real.notes, logger: h.logger)
                let options = h.options {
                    $0.concurrency = 2
                    $0.tuning.reorderWindow = 4
                    $0.tuning.ledgerBatchSize = 1
                    $0.maxDowngradeRatio = 1
                }
                let windowed = Task { try await job.run(options, runID: "run-window") }
                // The three users behind the stuck one are answered and in the ledger: all the window allows. A scan
                // that ignored the window would have asked w-04 before w-03's verdict reached the database.
                try await waitUntil { bounded.answered.value == 3 }
                try await waitUntil {
                    try await h.count("select count(*)::int from reconcile_verdicts where run_id = 'run-window'") == 3
                }
                #expect(bounded.calls.value == 4, "the scan stays within 4 users of the stuck one")
                bounded.release.stop(reason: "go")
                #expect(try await windowed.value.exitStatus == .ok)

                // A wide window: every other verdict reaches the ledger while the first user is still stuck.
                var fresh: [String] = []
                for n in 0..<12 {
                    let id = String(format: "x-%02d", n)
                    fresh.append(id)
                    try await h.seed(h.row(id, tier: 1, "active", end: -2), Harness.subscription(purchased: -2, expires: 28))
                }
                let wide = HeldFirstUser(inner: real, held: "x-00")
                let wideJob = ReconcileJob(
                    ports: JobPorts(postgres: h.db), source: wide, stats: stats, sourcesNote: real.notes, logger: h.logger)
                let wideOptions = h.options {
                    $0.concurrency = 2
                    $0.tuning.ledgerBatchSize = 1
                    $0.maxDowngradeRatio = 1
                }
                let wideRun = Task { try await wideJob.run(wideOptions, runID: "run-wide") }
                try await waitUntil {
                    try await h.count("select count(*)::int from reconcile_verdicts where run_id = 'run-wide'") == fresh.count - 1
                }
                #expect(
                    try await h.count("select count(*)::int from reconcile_verdicts where run_id = 'run-wide' and user_id = 'x-00'") == 0)
                wide.release.stop(reason: "go")
                #expect(try await wideRun.value.summary.candidates == fresh.count)
                #expect(try await h.auditRows("x-00") == 1)
            }
        }
    }

    @Test("a dry run whose first user answers last still reports in scan order")
    func dryRunReportsInScanOrder() async throws {
        try await Harness.with { h in
            var ids: [String] = []
            for n in 0..<8 {
                let id = String(format: "d-%02d", n)
                ids.append(id)
                try await h.seed(h.row(id, tier: 1, "active", end: -2), Harness.subscription(purchased: -2, expires: 28))
            }
            try await HTTPClientScope.with { http in
                let config = try SubreconConfiguration.load(h.env, requireSource: true)
                let stats = RequestStats()
                let real = try StoreFactSource(configuration: config, httpClient: http, stats: stats, logger: h.logger)
                let held = HeldFirstUser(inner: real, held: "d-00")
                let job = ReconcileJob(
                    ports: JobPorts(postgres: h.db), source: held, stats: stats, sourcesNote: real.notes, logger: h.logger)
                let run = Task {
                    try await job.run(
                        h.options {
                            $0.dryRun = true
                            $0.concurrency = 3
                            $0.tuning.ledgerBatchSize = 1
                        }, runID: "run-dry")
                }
                // Everyone but the held first user has been answered: only then is it let go.
                try await waitUntil { held.answered.value == ids.count - 1 }
                held.release.stop(reason: "go")
                let result = try await run.value
                let data = try Data(contentsOf: result.folder.appendingPathComponent("drift.json"))
                let rows = try JSONDecoder().decode([ReportRow].self, from: data)
                #expect(rows.map(\.userID) == ids)
            }
        }
    }

    /// Polls `condition` (an observable state: a counter, a row) until it holds, for at most `limit`.
    func waitUntil(limit: Duration = .seconds(20), _ condition: () async throws -> Bool) async throws {
        let deadline = ContinuousClock.now + limit
        while ContinuousClock.now < deadline {
            if try await condition() { return }
            try await Task.sleep(for: .milliseconds(10))
        }
        Issue.record("condition not reached within \(limit)")
    }

    func runIDs(_ h: Harness) async throws -> [String] {
        var ids: [String] = []
        for try await id in try await h.client.query("select id from reconcile_runs order by started_at").decode(String.self) {
            ids.append(id)
        }
        return ids
    }
}

/// Answers every user through `inner`, except `held`, whose answer waits until `release` is signalled.
struct HeldFirstUser: FactSource {
    let inner: any FactSource
    let held: String
    let release = StopSignal()
    let calls = CallCount()
    /// Users (other than `held`) whose facts were returned.
    let answered = CallCount()

    func facts(for row: UserRow) async -> SourceFacts {
        calls.increment()
        if row.id == held { await release.wait() }
        let facts = await inner.facts(for: row)
        if row.id != held { answered.increment() }
        return facts
    }
}

final class CallCount: Sendable {
    private let count = Mutex(0)
    var value: Int { count.withLock { $0 } }
    func increment() { count.withLock { $0 += 1 } }
}
