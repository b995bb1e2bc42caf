import Foundation
import SubreconCore
import SubreconPorts
import SubreconReports
import SubreconTestKit
import Testing

@testable import SubreconJob

/// `--users-file` ids that match no row (docs/CONTRACT.md "Commands"): counted and named in the summary, the
/// terminal's lines and the log; a file none of whose ids has a row is exit 66 before the run is recorded, never a
/// clean night that selected nobody. In memory: the job through its ports.
@Suite("A users file whose ids match no row", .timeLimit(.minutes(1)))
struct UsersFileMatchTests {
    static let users: [String: Scenario] = ["f-lapsed": .lapsed, "f-renewed": .renewed]

    @Test("some ids match no row: the run goes on, the summary counts and names them (escaped where printed)")
    func someUnmatched() async throws {
        try await JobFixture.with(Self.users) { world in
            let ids = ["f-lapsed", "ghost\u{1B}[2J", "f-renewed", "ghost-2"]
            let result = try await world.run(world.options { $0.userIDs = ids }, runID: "run-some")
            #expect(result.exitStatus == .ok)
            let match = try #require(result.summary.usersFile)
            #expect(match.ids == 4 && match.unmatched == 2 && match.firstUnmatched == ["ghost\u{1B}[2J", "ghost-2"])
            let text = TerminalSummary.text(result.summary, folder: result.folder)
            #expect(text.contains("users file  2 of 4 ids match no row in users"), "\(text)")
            #expect(!text.contains("\u{1B}"), "no control character reaches the terminal")
            let json = try Data(contentsOf: result.folder.appendingPathComponent("summary.json"))
            let stored = try JSONDecoder().decode(RunSummary.self, from: json)
            #expect(stored.usersFile == match, "summary.json carries the count and the ids")
            #expect(world.database.user("f-lapsed")?.currentTier == 0, "the matched ids were reconciled")
        }
    }

    @Test("no id matches a row: exit 66 naming the ids, no run recorded, no source asked")
    func noneMatch() async throws {
        try await JobFixture.with(Self.users) { world in
            do {
                let result = try await world.run(world.options { $0.userIDs = ["nope-1", "nope-2"] }, runID: "run-none")
                Issue.record("a users file matching no row ended \(result.exitStatus)")
            } catch let failure as CommandFailure {
                #expect(failure.status == .noInput, "\(failure)")
                #expect(failure.description.contains("none of its 2 ids") && failure.description.contains("\"nope-1\""), "\(failure)")
            }
            #expect(world.database.runStatus("run-none") == nil, "nothing recorded")
            #expect(world.source.asked.isEmpty, "no source asked")
        }
    }

    @Test("with shards, only this shard's ids count; a shard the file names no id of runs as before")
    func shards() async throws {
        try await JobFixture.with(Self.users) { world in
            let ghosts = (0..<40).map { "ghost-\($0)" }
            let shard = try #require([ShardSpec(index: 0, count: 2), ShardSpec(index: 1, count: 2)].first { $0.contains("f-lapsed") })
            let mine = ghosts.filter(shard.contains)
            let holder = "f-lapsed"
            let result = try await world.run(
                world.options {
                    $0.userIDs = ghosts + [holder]
                    $0.shard = shard
                }, runID: "run-shard")
            #expect(result.summary.usersFile?.ids == mine.count + 1)
            #expect(result.summary.usersFile?.unmatched == mine.count)
        }
    }
}
