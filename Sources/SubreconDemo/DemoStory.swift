import Foundation
import SubreconApp
import SubreconCore
import SubreconJob
import SubreconReports

extension DemoRunner {
    /// One line per seeded user, read back from the run's drift.json: the action, the drift kinds, why the user was a
    /// candidate (`candidate_reason`), the sources asked (`sources`) and what the user was seeded to show. Empty
    /// fields are `-`, so every line splits into the same columns; the ordinary renewals (`folded`) share one line
    /// listing the distinct values their rows hold.
    static func story(title: String, users: [DemoUser], result: RunResult) throws -> String {
        let data = try Data(contentsOf: result.folder.appendingPathComponent("drift.json"))
        let rows = Dictionary(uniqueKeysWithValues: try JSONDecoder().decode([ReportRow].self, from: data).map { ($0.userID, $0) })
        func list(_ values: [String]?) -> String {
            guard let values, !values.isEmpty else { return "-" }
            return values.joined(separator: ";")
        }
        func cells(_ row: ReportRow?) -> [String] {
            guard let row else { return ["not-a-candidate", "-", "-", "-"] }
            return [row.action, list(row.drift), list(row.candidateReason), list(row.sources)]
        }
        var table: [[String]] = [["user", "action", "drift", "candidate_reason", "sources", "what it shows"]]
        let folded = users.filter(\.folded)
        for user in users {
            if !user.folded {
                table.append([user.row.id] + cells(rows[user.row.id]) + [user.shows])
            } else if user.row.id == folded.first?.row.id, let last = folded.last {
                let columns = folded.map { cells(rows[$0.row.id]) }
                let distinct = (0..<4).map { column in
                    columns.map { $0[column] }.reduce(into: [String]()) { seen, value in
                        if !seen.contains(value) { seen.append(value) }
                    }.joined(separator: "|")
                }
                table.append(["\(user.row.id)…\(last.row.id)"] + distinct + ["\(folded.count) × \(user.shows)"])
            }
        }
        let widths = (0..<5).map { column in table.map { $0[column].count }.max() ?? 0 }
        let lines = table.map { cells in
            "  " + (0..<5).map { cells[$0].padding(toLength: widths[$0], withPad: " ", startingAt: 0) }.joined(separator: "  ")
                + "  " + cells[5]
        }
        return ([title] + lines).joined(separator: "\n")
    }
}
