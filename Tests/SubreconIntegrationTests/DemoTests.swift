import Foundation
import Logging
import Subrecon
import SubreconCore
import SubreconReports
import Testing

@Suite(
    "subrecon demo",
    .serialized,
    .enabled(
        if: FileManager.default.fileExists(atPath: "/usr/lib/postgresql") || ProcessInfo.processInfo.environment["SUBRECON_REQUIRE_DATABASE"] == "1",
        "PostgreSQL server binaries are not installed (apt-get install -y postgresql-15)"))
struct DemoTests {
    @Test("the demo runs the real job and its summary matches its reports, covering every drift kind it seeds")
    func demo() async throws {
        let reports = FileManager.default.temporaryDirectory.appendingPathComponent("subrecon-demo-test-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: reports) }
        let result = try await DemoRunner.run(
            reportDirectory: reports, keep: false, logger: Logger(label: "demo-test"), progress: nil, say: { _ in })
        let rows = try JSONDecoder().decode(
            [ReportRow].self, from: Data(contentsOf: result.folder.appendingPathComponent("drift.json")))
        #expect(rows.count == result.summary.candidates)
        #expect(rows.filter(\.applied).count == result.summary.applied)
        for action in Action.allCases {
            #expect(rows.filter { $0.action == action.rawValue }.count == result.summary.actions[action.rawValue] ?? 0)
        }
        for kind in Drift.allCases {
            #expect(rows.filter { $0.drift.contains(kind.rawValue) }.count == result.summary.drift[kind.rawValue] ?? 0)
        }
        let seen = Set(rows.flatMap(\.drift))
        let expected = Set(Drift.allCases.map(\.rawValue)).subtracting(["concurrent_update"])
        #expect(expected.subtracting(seen).isEmpty, "demo misses drift kinds: \(expected.subtracting(seen).sorted())")
        #expect(result.summary.valve?.tripped == false)
        let intents = try JSONSerialization.jsonObject(with: Data(contentsOf: result.folder.appendingPathComponent("push_intents.json"))) as? [Any]
        #expect(intents?.count == result.summary.intentsQueued)
        let text = TerminalSummary.text(result.summary, folder: result.folder)
        #expect(text.contains("candidates  \(result.summary.candidates)"))
    }
}
