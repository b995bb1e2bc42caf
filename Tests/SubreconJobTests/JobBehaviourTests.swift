import Foundation
import SubreconCore
import SubreconPorts
import SubreconReports
import SubreconTestKit
import Testing

@testable import SubreconJob

/// The job's behaviour through its ports, in memory: no database, no network.
@Suite("The job through in-memory ports", .timeLimit(.minutes(1)))
struct JobBehaviourTests {
    /// One user of each scenario.
    static let mixed: [String: Scenario] = [
        "m-lapsed": .lapsed, "m-renewed": .renewed, "m-billing": .billing, "m-insync": .inSync, "m-restored": .restored,
    ]

    @Test("the scripted scenarios decide as these tests assume")
    func scenarios() {
        let context = DecisionContext(asOf: asOf, environment: .production, catalog: testCatalog)
        for scenario in Scenario.allCases {
            let verdict = Decision.decide(row: scenario.userRow("u"), facts: scenario.facts, context: context)
            #expect(verdict.action == scenario.action, "\(scenario)")
        }
    }

    @Test("a night: validate, then apply, then report; each change written once with its audit row and intents")
    func phasesInOrder() async throws {
        try await JobFixture.with(Self.mixed) { world in
            let result = try await world.run(world.options(), runID: "run-night")
            #expect(result.exitStatus == .ok)
            let events = world.database.events
            let appended = events.indices.filter { events[$0].appendedUsers != nil }
            let applied = events.indices.filter { events[$0].appliedUsers != nil }
            let finished = try #require(events.firstIndex(of: .finishRun(.completed)))
            #expect(events.first == .startRun("run-night"))
            // docs/CONTRACT.md "Applying": all candidates are decided first.
            #expect(!appended.isEmpty && !applied.isEmpty)
            #expect(appended.max()! < applied.min()!, "every verdict is in the ledger before the first write")
            #expect(applied.max()! < finished, "the run is finished only after the apply")
            #expect(events.last == .finishRun(.completed))

            for (id, scenario) in Self.mixed {
                let changes = scenario.action == .none ? 0 : 1
                #expect(world.database.audits(of: id).count == changes, "\(id)")
                #expect(world.database.audits(of: id).first?.action == (changes == 1 ? scenario.action : nil))
            }
            #expect(world.database.user("m-lapsed")?.currentTier == 0)
            #expect(world.database.user("m-restored")?.currentTier == 1)
            #expect(world.database.user("m-renewed")?.endDate == day(28))
            let kinds = Set(world.database.intents.map(\.intent.kind))
            #expect(kinds == [.expired, .billingIssue, .restored])
            #expect(world.database.ledger(runID: "run-night").allSatisfy { $0.outcome != nil }, "every entry decided")
            #expect(world.database.runStatus("run-night") == .completed)
            #expect(result.summary.candidates == 5 && result.summary.applied == 4)
            for name in ["drift.csv", "drift.json", "push_intents.csv", "summary.json"] {
                #expect(FileManager.default.fileExists(atPath: result.folder.appendingPathComponent(name).path), "\(name)")
            }
        }
    }

    @Test("a rerun changes nothing and queues no intent twice")
    func rerun() async throws {
        try await JobFixture.with(Self.mixed) { world in
            _ = try await world.run(world.options(), runID: "run-first")
            let after = world.outcome
            // The source still says the same: the second night finds nothing to change.
            let second = try await world.run(world.options(), runID: "run-second")
            #expect(second.exitStatus == .ok)
            #expect(world.outcome == after)
            #expect(world.database.audits.allSatisfy { $0.runID == "run-first" })
        }
    }

    @Test("the safety valve trips: nothing applied, still reported, exit 3; --accept-downgrades then applies without asking again")
    func valve() async throws {
        var users = Dictionary(uniqueKeysWithValues: JobFixture.ids("v-lapsed", 6).map { ($0, Scenario.lapsed) })
        users["v-renewed"] = .renewed
        try await JobFixture.with(users) { world in
            let before = world.outcome
            let tripped = try await world.run(world.options { $0.maxDowngradeRatio = 0.5 }, runID: "run-valve")
            // docs/CONTRACT.md "Applying": more than the ratio of tier holders would lose it, so nothing is applied.
            #expect(tripped.exitStatus == .valveTripped)
            #expect(tripped.summary.valve?.tripped == true && tripped.summary.valve?.wouldLoseTier == 6)
            #expect(tripped.summary.valve?.heldTier == 7)
            #expect(world.outcome == before, "no row, audit row or intent written")
            #expect(!world.database.events.contains { $0.appliedUsers != nil })
            #expect(world.database.runStatus("run-valve") == .valveTripped)
            #expect(world.database.ledger(runID: "run-valve").count == 7)
            #expect(tripped.summary.applied == 0)

            let asked = world.source.asked.count
            let accepted = try await world.resume("run-valve") { $0.acceptDowngrades = true }
            #expect(accepted.exitStatus == .ok && accepted.summary.applied == 7)
            #expect(world.source.asked.count == asked, "no source asked again")
            #expect(world.database.users.filter { $0.currentTier == 0 }.count == 6)
            #expect(world.database.audits.count == 7)
        }
    }

    @Test("a ratio at the threshold does not trip the valve")
    func valveAtThreshold() async throws {
        var users = Dictionary(uniqueKeysWithValues: JobFixture.ids("h-lapsed", 2).map { ($0, Scenario.lapsed) })
        users["h-renewed-0"] = .renewed
        users["h-renewed-1"] = .renewed
        try await JobFixture.with(users) { world in
            let result = try await world.run(world.options { $0.maxDowngradeRatio = 0.5 }, runID: "run-half")
            #expect(result.exitStatus == .ok && result.summary.valve?.tripped == false)
            #expect(world.database.audits.count == 4)
        }
    }

    @Test("apply follows scan order (user id order), whatever order the answers came in")
    func applyOrder() async throws {
        let ids = JobFixture.ids("o", 6)
        try await JobFixture.with(Dictionary(uniqueKeysWithValues: ids.map { ($0, Scenario.renewed) })) { world in
            // The first users in scan order answer last.
            for (index, id) in ids.enumerated() {
                world.source.script(id, .facts(Scenario.renewed.facts, delay: .milliseconds(40 * (ids.count - index))))
            }
            let result = try await world.run(
                world.options {
                    $0.concurrency = 6
                    $0.tuning.ledgerBatchSize = 1
                    $0.tuning.applyBatchSize = 2
                }, runID: "run-order")
            #expect(result.exitStatus == .ok)
            let events = world.database.events
            let appended = events.flatMap { $0.appendedUsers ?? [] }
            let applied = events.flatMap { $0.appliedUsers ?? [] }
            #expect(appended != ids, "the answers came out of scan order (else this test shows nothing)")
            #expect(applied == ids)
            #expect(world.database.ledger(runID: "run-order").map(\.verdict.row.id) == ids, "the ledger reads in scan order")
            #expect(world.database.audits.map(\.userID) == ids)
        }
    }

    @Test("a row changed between read and write is not overwritten: concurrent_update, row untouched")
    func concurrentUpdate() async throws {
        try await JobFixture.with(["c-raced": .lapsed, "c-calm": .renewed, "c-gone": .lapsed]) { world in
            let database = world.database
            // A webhook renews c-raced while the job asks about it, and c-gone is deleted: the job's CAS must lose.
            world.source.whenAsked { id, _ in
                if id == "c-raced" {
                    database.webhookWrite(id) {
                        $0.endDate = day(30)
                        $0.statusText = "active"
                    }
                }
                if id == "c-gone" { database.delete(id) }
            }
            let webhookRow = { database.user("c-raced") }
            let result = try await world.run(world.options(), runID: "run-raced")
            let raced = try #require(webhookRow())
            #expect(raced.currentTier == 1 && raced.endDate == day(30), "the webhook's write survives")
            #expect(database.audits(of: "c-raced").isEmpty && database.intents(of: "c-raced").isEmpty)
            let outcomes = Dictionary(
                uniqueKeysWithValues: database.ledger(runID: "run-raced").compactMap { entry in
                    entry.outcome.map { (entry.verdict.row.id, $0) }
                })
            #expect(outcomes["c-raced"] == .concurrentUpdate)
            #expect(outcomes["c-gone"] == .notFound)
            #expect(outcomes["c-calm"] == .applied)
            #expect(database.audits(of: "c-calm").count == 1)
            #expect(result.summary.concurrentUpdates == 2)
            #expect(result.summary.applied == 1)
            let drift = try String(contentsOf: result.folder.appendingPathComponent("drift.csv"), encoding: .utf8)
            let line = try #require(drift.split(separator: "\r\n").first { $0.hasPrefix("run-raced,c-raced,") })
            #expect(line.contains("concurrent_update"))
        }
    }

    @Test("a source error or a user past its deadline leaves the row untouched and reported; exit 1")
    func sourceErrors() async throws {
        try await JobFixture.with(["f-error": .lapsed, "f-stall": .lapsed, "f-fine": .renewed]) { world in
            world.source.script("f-error", .error(SourceError(origin: .revenueCat, kind: .fetch, message: "HTTP 500")))
            world.source.script("f-stall", .stall)
            let before = try #require(world.database.user("f-error"))
            // The deadline ends f-stall; it is generous so that f-fine (microseconds of work) meets it even when the
            // whole test process is starved of CPU by the suites running beside it.
            let result = try await world.run(world.options { $0.userDeadline = .seconds(12) }, runID: "run-faults")
            #expect(result.exitStatus == .userErrors)
            #expect(result.summary.errors == 2)
            for id in ["f-error", "f-stall"] {
                #expect(world.database.user(id)?.currentTier == 1 && world.database.user(id)?.statusText == "active", "\(id)")
                #expect(world.database.audits(of: id).isEmpty && world.database.intents(of: id).isEmpty)
                let verdict = try #require(world.database.ledger(runID: "run-faults").first { $0.verdict.row.id == id })
                #expect(verdict.verdict.drift == [.fetchError] && verdict.verdict.action == .skipped)
                #expect(verdict.outcome == .unchanged)
            }
            #expect(world.database.user("f-error") == before, "not even updated_at moved")
            #expect(world.database.audits(of: "f-fine").count == 1)
        }
    }
}
