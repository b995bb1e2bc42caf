import Foundation
import SubreconCore
import SubreconPorts
import SubreconReports
import SubreconTestKit
import Synchronization
import Testing

@testable import SubreconJob

/// Stopping and resuming a run (docs/CONTRACT.md "Exit codes": 75, `--resume RUN_ID` continues it), in memory.
@Suite("Stopping and resuming the job through in-memory ports", .timeLimit(.minutes(1)))
struct ResumeBehaviourTests {
    /// 24 users, the scenarios in turn: enough for several ledger and apply batches.
    static let users: [String: Scenario] = {
        let cycle: [Scenario] = [.lapsed, .renewed, .billing, .inSync, .restored, .renewed]
        return Dictionary(uniqueKeysWithValues: JobFixture.ids("r", 24).enumerated().map { ($1, cycle[$0 % cycle.count]) })
    }()

    static func options(_ world: JobFixture, stop: StopSignal? = nil) -> RunOptions {
        world.options {
            $0.tuning.ledgerBatchSize = 5
            $0.tuning.applyBatchSize = 4
            $0.concurrency = 2
            $0.stop = stop
        }
    }

    /// What the same night leaves when it runs in one go.
    static func uninterrupted() async throws -> [String] {
        try await JobFixture.with(users) { world in
            let result = try await world.run(options(world), runID: "run-whole")
            #expect(result.exitStatus == .ok)
            return world.outcome
        }
    }

    /// Every change written exactly once: one audit row per changed user, its intents once each.
    static func expectEachChangeOnce(_ world: JobFixture) {
        for (id, scenario) in users {
            let audits = world.database.audits(of: id)
            #expect(audits.count == (scenario.action == .none ? 0 : 1), "\(id): one audit row per change")
            let keys = world.database.intents(of: id).map(\.intent.dedupeKey)
            #expect(Set(keys).count == keys.count)
        }
    }

    @Test("a stop mid-validation ends resumable (exit 75); --resume asks only the users not yet judged and applies each change once")
    func stopWhileValidating() async throws {
        let expected = try await Self.uninterrupted()
        try await JobFixture.with(Self.users) { world in
            let stop = StopSignal()
            world.source.whenAsked { _, count in
                if count == 13 { stop.stop(reason: "SIGTERM") }
            }
            await #expect {
                try await world.run(Self.options(world, stop: stop), runID: "run-stopped")
            } throws: { error in
                let failure = error as? CommandFailure
                return failure?.status == .stopped && failure?.description.contains("--resume run-stopped") == true
            }
            #expect(world.database.runStatus("run-stopped") == .failed)
            #expect(world.database.audits.isEmpty && world.database.intents.isEmpty, "nothing applied before validation ends")
            let progress = try #require(world.database.progress("run-stopped"))
            #expect(!progress.scanDone)
            let judged = world.database.ledger(runID: "run-stopped").map(\.verdict.row.id)
            #expect(!judged.isEmpty && judged.count < 24, "stopped part way: \(judged.count) judged")
            let askedBefore = world.source.askedCount

            world.source.whenAsked { _, _ in }
            let resumed = try await world.resume("run-stopped")
            #expect(resumed.exitStatus == .ok && resumed.summary.runID == "run-stopped")
            #expect(resumed.summary.candidates == 24)
            let asked = world.source.askedCount
            for id in judged {
                #expect(asked[id] == askedBefore[id], "\(id) was judged before the stop and is not asked again")
            }
            #expect(Set(asked.keys) == Set(Self.users.keys), "every user asked")
            #expect(asked.values.allSatisfy { $0 <= 2 }, "a user in flight at the stop is asked once more at most")
            let ledger = world.database.ledger(runID: "run-stopped").map(\.verdict.row.id)
            #expect(ledger.count == 24 && Set(ledger).count == 24, "each user judged once")
            Self.expectEachChangeOnce(world)
            #expect(world.outcome == expected, "ends where an uninterrupted run ends")
            #expect(world.database.runStatus("run-stopped") == .completed)
        }
    }

    @Test("a stop while applying: the batch in progress commits, exit 75; --resume applies the rest once")
    func stopWhileApplying() async throws {
        let expected = try await Self.uninterrupted()
        try await JobFixture.with(Self.users) { world in
            let stop = StopSignal()
            let stopping = StoppingAfterApplies(inner: world.database, stop: stop, after: 2)
            var ports = world.job().ports
            ports.verdicts = stopping  // one port replaced; the others stay the in-memory database
            var job = world.job()
            job.ports = ports
            await #expect(throws: CommandFailure.self) {
                try await job.run(Self.options(world, stop: stop), runID: "run-applying", startedAt: world.clock.now())
            }
            #expect(world.database.runStatus("run-applying") == .failed)
            let written = world.database.audits.count
            #expect(written > 0 && written < 20, "the first batches were written, not all: \(written)")
            let askedBefore = world.source.asked.count

            let resumed = try await world.resume("run-applying")
            #expect(resumed.exitStatus == .ok)
            #expect(world.source.asked.count == askedBefore, "no source asked again")
            Self.expectEachChangeOnce(world)
            #expect(world.outcome == expected)
        }
    }

    @Test("a run that failed while applying resumes without writing anyone twice")
    func failedWhileApplying() async throws {
        let expected = try await Self.uninterrupted()
        try await JobFixture.with(Self.users) { world in
            world.database.failApply(onCall: 2)
            await #expect(throws: (any Error).self) {
                try await world.run(Self.options(world), runID: "run-broken")
            }
            #expect(world.database.runStatus("run-broken") == .failed)
            #expect(!world.database.audits.isEmpty)
            let asked = world.source.asked.count
            let resumed = try await world.resume("run-broken")
            #expect(resumed.exitStatus == .ok)
            #expect(world.source.asked.count == asked, "no source asked again")
            Self.expectEachChangeOnce(world)
            #expect(world.outcome == expected)
            let changes = Self.users.values.filter { $0.action != .none }.count
            #expect(resumed.summary.applied == changes, "the report counts the whole ledger, both attempts")
        }
    }
}

/// The in-memory ledger, asking the run to stop once `after` applies went through (a SIGTERM while applying).
struct StoppingAfterApplies: VerdictRecords {
    let inner: InMemoryDatabase
    let stop: StopSignal
    let after: Int
    let calls = CallCounter()

    func applyDetailed(_ verdicts: [Verdict], runID: String, ledger: Bool) async throws -> [AppliedVerdict] {
        let applied = try await inner.applyDetailed(verdicts, runID: runID, ledger: ledger)
        if calls.next() == after { stop.stop(reason: "SIGTERM") }
        return applied
    }
    func appendVerdicts(runID: String, _ verdicts: [Verdict], seqs: [Int64], progress: RunProgress) async throws {
        try await inner.appendVerdicts(runID: runID, verdicts, seqs: seqs, progress: progress)
    }
    func ledgerTail(runID: String, afterUser: String?) async throws -> LedgerTail {
        try await inner.ledgerTail(runID: runID, afterUser: afterUser)
    }
    func ledgerPage(runID: String, afterSeq: Int64, limit: Int) async throws -> [LedgerEntry] {
        try await inner.ledgerPage(runID: runID, afterSeq: afterSeq, limit: limit)
    }
    func ledgerRefunds(runID: String, afterSeq: Int64, limit: Int) async throws -> [LedgerRefunds] {
        try await inner.ledgerRefunds(runID: runID, afterSeq: afterSeq, limit: limit)
    }
    func markUnchanged(runID: String, seqs: [Int64]) async throws { try await inner.markUnchanged(runID: runID, seqs: seqs) }
    func ledgerTransfers(runID: String) async throws -> [LineTransfer] { try await inner.ledgerTransfers(runID: runID) }
    func replaceVerdicts(runID: String, _ verdicts: [Verdict]) async throws { try await inner.replaceVerdicts(runID: runID, verdicts) }
}

final class CallCounter: Sendable {
    private let value = Mutex(0)
    func next() -> Int {
        value.withLock {
            $0 += 1
            return $0
        }
    }
}
