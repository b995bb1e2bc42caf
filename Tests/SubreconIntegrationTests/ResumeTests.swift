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

@Suite("Resuming runs and re-rendering reports", .serialized, .enabled(if: Harness.isEnabled, Harness.skip))
struct ResumeTests {
    /// 24 users: lapsed, renewed, billing issue, refund, in sync — enough for several ledger batches.
    func seed(_ h: Harness) async throws {
        for n in 0..<24 {
            let id = String(format: "r-%02d", n)
            switch n % 4 {
            case 0: try await h.seed(h.row(id, tier: 1, "active", end: -2), Harness.subscription(expires: -2))
            case 1: try await h.seed(h.row(id, tier: 1, "active", end: -2), Harness.subscription(purchased: -2, expires: 28))
            case 2: try await h.seed(h.row(id, tier: 1, "active", end: -1), Harness.subscription(expires: -1, grace: 10, billing: -1))
            default: try await h.seed(h.row(id, tier: 0, "expired", end: -9), Harness.subscription(expires: -9))
            }
        }
    }

    /// What a run leaves behind, comparable across schemas.
    func outcome(_ h: Harness) async throws -> [String] {
        var lines: [String] = []
        let rows = try await h.client.query(
            """
            select id || '|' || current_tier || '|' || subscription_status || '|' || coalesce(subscription_end_date::text, '') || '|' || \
            coalesce(grace_period_ends_at::text, '') || '|' || (select count(*) from reconcile_changes c where c.user_id = u.id) || '|' || \
            (select count(*) from push_intents p where p.user_id = u.id) from users u order by id
            """)
        for try await line in rows.decode(String.self) { lines.append(line) }
        return lines
    }

    /// The outcome of the same night run in one go, in a schema of its own.
    func uninterruptedOutcome() async throws -> [String] {
        var expected: [String] = []
        try await Harness.with { h in
            try await seed(h)
            _ = try await h.run { $0.maxDowngradeRatio = 1 }
            expected = try await outcome(h)
        }
        return expected
    }

    func job(_ h: Harness, http: HTTPClient, source: (any FactSource)? = nil, verdicts: (any VerdictRecords)? = nil) throws -> ReconcileJob
    {
        let config = try SubreconConfiguration.load(h.env, requireSource: true)
        let stats = RequestStats()
        let real = try StoreFactSource(configuration: config, httpClient: http, stats: stats, logger: h.logger)
        var ports = JobPorts(postgres: h.db)
        if let verdicts { ports.verdicts = verdicts }  // one port replaced; the others stay the real database
        return ReconcileJob(ports: ports, source: source ?? real, stats: stats, sourcesNote: real.notes, logger: h.logger)
    }

    func options(_ h: Harness) -> RunOptions {
        h.options {
            $0.tuning.ledgerBatchSize = 5
            $0.tuning.applyBatchSize = 4
            $0.concurrency = 2
            $0.maxDowngradeRatio = 1
        }
    }

    @Test("a run killed while validating resumes without asking again, and ends where an uninterrupted run ends")
    func killedWhileValidating() async throws {
        let expected = try await uninterruptedOutcome()
        try await Harness.with { h in
            try await seed(h)
            try await HTTPClientScope.with { http in
                let stall = StallAfter(inner: try job(h, http: http).source, allowed: 13)
                let killed = try job(h, http: http, source: stall)
                let task = Task { try await killed.run(options(h), runID: "run-killed") }
                while try await h.count("select validated::int from reconcile_runs where id = 'run-killed'") < 10 {
                    try await Task.sleep(for: .milliseconds(20))
                }
                task.cancel()
                switch await task.result {
                case .success: Issue.record("the killed run should not finish")
                case .failure(let error):
                    let failure = try #require(error as? CommandFailure)
                    #expect(failure.status == .stopped && failure.description.contains("--resume run-killed"))
                }
            }
            let validated = try await h.count("select validated::int from reconcile_runs where id = 'run-killed'")
            #expect(validated >= 10 && validated < 24)
            #expect(try await h.count("select count(*)::int from reconcile_changes") == 0, "nothing applied before validation ends")
            let askedBefore = await h.revenueCat.counters().requestsPerUser
            // Verdicts reach the ledger as they finish (not necessarily in scan order): whoever is in it is not asked again.
            var validatedUsers: [String] = []
            for try await id in try await h.client.query("select user_id from reconcile_verdicts where run_id = 'run-killed'").decode(
                String.self)
            {
                validatedUsers.append(id)
            }
            #expect(validatedUsers.count >= validated)

            let resumed = try await Commands.run(environment: h.env, options: h.options(), logger: h.logger, resume: "run-killed")
            #expect(resumed.summary.runID == "run-killed" && resumed.exitStatus == .ok)
            #expect(resumed.summary.candidates == 24)
            #expect(try await outcome(h) == expected)
            let asked = await h.revenueCat.counters().requestsPerUser
            for id in validatedUsers {
                #expect(asked[id] == askedBefore[id], "\(id) was not asked again")
            }
            #expect(asked.values.allSatisfy { $0 <= 2 })
        }
    }

    @Test("a run that failed while applying resumes without writing anyone twice")
    func failedWhileApplying() async throws {
        let expected = try await uninterruptedOutcome()
        try await Harness.with { h in
            try await seed(h)
            try await HTTPClientScope.with { http in
                let failing = FailingApply(db: h.db, failOnCall: 2)
                await #expect(throws: (any Error).self) {
                    try await job(h, http: http, verdicts: failing).run(options(h), runID: "run-broken")
                }
            }
            #expect(try await h.count("select count(*)::int from reconcile_runs where id = 'run-broken' and status = 'failed'") == 1)
            let auditBefore = try await h.count("select count(*)::int from reconcile_changes")
            #expect(auditBefore > 0)
            let asked = await h.revenueCat.counters().totalRequests
            let resumed = try await Commands.run(environment: h.env, options: h.options(), logger: h.logger, resume: "run-broken")
            #expect(resumed.exitStatus == .ok)
            #expect(await h.revenueCat.counters().totalRequests == asked, "no source asked again")
            #expect(try await outcome(h) == expected)
            #expect(resumed.summary.applied == 18)
            #expect(try h.csvLines(resumed, "push_intents.csv").count == 1 + 12, "intents queued before the failure are reported too")
        }
    }

    @Test("--accept-downgrades applies a tripped run without asking the sources again; report re-renders it")
    func acceptDowngrades() async throws {
        try await Harness.with { h in
            try await seed(h)
            let tripped = try await h.run { $0.maxDowngradeRatio = 0.1 }
            #expect(tripped.exitStatus == .valveTripped)
            let asked = await h.revenueCat.counters().totalRequests
            let accepted = try await Commands.run(
                environment: h.env, options: h.options { $0.acceptDowngrades = true }, logger: h.logger,
                resume: tripped.summary.runID)
            #expect(accepted.exitStatus == .ok && accepted.summary.applied == 18)
            #expect(await h.revenueCat.counters().totalRequests == asked)
            #expect(try await h.count("select count(*)::int from users where current_tier = 0 and subscription_status = 'expired'") == 12)

            let again = FileManager.default.temporaryDirectory.appendingPathComponent("subrecon-rerender-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: again) }
            let rendered = try await Commands.report(
                environment: h.env, runID: accepted.summary.runID, reportDirectory: again, logger: h.logger)
            for name in ["drift.csv", "drift.json", "push_intents.csv"] {
                let original = try Data(contentsOf: accepted.folder.appendingPathComponent(name))
                let copy = try Data(contentsOf: rendered.folder.appendingPathComponent(name))
                #expect(original == copy, "\(name) re-renders identically")
            }
            await #expect(throws: CommandFailure.self) {
                try await Commands.run(environment: h.env, options: h.options(), logger: h.logger, resume: accepted.summary.runID)
            }
        }
    }
}

/// Lets `allowed` users through, then stalls every further request until cancelled (a kill mid-run).
struct StallAfter: FactSource {
    let inner: any FactSource
    let allowed: Int
    let calls = Counter()

    func facts(for row: UserRow) async -> SourceFacts {
        if calls.next() > allowed {
            try? await Task.sleep(for: .seconds(3600))
            return .failed(SourceError(origin: .revenueCat, kind: .fetch, message: "cancelled"))
        }
        return await inner.facts(for: row)
    }
}

final class Counter: Sendable {
    private let value = Mutex(0)
    func next() -> Int {
        value.withLock {
            $0 += 1
            return $0
        }
    }
}

/// The real database, except that its `failOnCall`-th apply fails (the database went away mid-run).
struct FailingApply: VerdictRecords {
    let db: SubscriptionDatabase
    let failOnCall: Int
    let calls = Counter()
    struct Broken: Error {}

    func applyDetailed(_ verdicts: [Verdict], runID: String, ledger: Bool) async throws -> [AppliedVerdict] {
        if calls.next() == failOnCall { throw Broken() }
        return try await db.verdicts.applyDetailed(verdicts, runID: runID, ledger: ledger)
    }
    func appendVerdicts(runID: String, _ verdicts: [Verdict], seqs: [Int64], progress: RunProgress) async throws {
        try await db.verdicts.appendVerdicts(runID: runID, verdicts, seqs: seqs, progress: progress)
    }
    func ledgerTail(runID: String, afterUser: String?) async throws -> LedgerTail {
        try await db.verdicts.ledgerTail(runID: runID, afterUser: afterUser)
    }
    func ledgerPage(runID: String, afterSeq: Int64, limit: Int) async throws -> [LedgerEntry] {
        try await db.verdicts.ledgerPage(runID: runID, afterSeq: afterSeq, limit: limit)
    }
    func ledgerRefunds(runID: String, afterSeq: Int64, limit: Int) async throws -> [LedgerRefunds] {
        try await db.verdicts.ledgerRefunds(runID: runID, afterSeq: afterSeq, limit: limit)
    }
    func markUnchanged(runID: String, seqs: [Int64]) async throws { try await db.verdicts.markUnchanged(runID: runID, seqs: seqs) }
    func ledgerTransfers(runID: String) async throws -> [LineTransfer] { try await db.verdicts.ledgerTransfers(runID: runID) }
    func replaceVerdicts(runID: String, _ verdicts: [Verdict]) async throws {
        try await db.verdicts.replaceVerdicts(runID: runID, verdicts)
    }
}
