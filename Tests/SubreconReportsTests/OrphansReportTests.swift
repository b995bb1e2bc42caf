import Foundation
import SubreconCore
import Testing

@testable import SubreconReports

/// CONTRACT "Reports" `orphans.csv` and the orphans of `summary.json` (CONTRACT "Whose purchase it is").
@Suite("orphans.csv and the orphans summary")
struct OrphansReportTests {
    static let first = ISO8601.date("2025-05-30T03:00:00Z")!
    static let last = ISO8601.date("2025-06-01T03:00:00Z")!

    static let orphans = [
        Orphan(
            origin: .stripe, identifier: "cus_9", productID: "web.monthly", status: .active,
            endDate: ISO8601.date("2025-06-20T00:00:00Z"), accountToken: nil, price: nil, firstSeen: last, lastSeen: last),
        Orphan(
            origin: .googlePlay, identifier: "tok,\"a\"\r\nb", productID: "=premium", status: .billingIssue, endDate: nil,
            accountToken: "acct \"x\",\ny", price: Money(amount: Decimal(string: "9.99")!, currency: "eur"), firstSeen: first,
            lastSeen: last),
    ]

    @Test("orphans.csv: header, lines by store and identifier, every text exact (quotes, comma, CRLF, a leading =)")
    func golden() {
        let expected =
            "store,identifier,product_id,status,end_date,account_token,price,currency,first_seen,last_seen\r\n"
            + "google_play,\"tok,\"\"a\"\"\r\nb\",=premium,billing_issue,,\"acct \"\"x\"\",\ny\",9.99,EUR,"
            + "2025-05-30T03:00:00Z,2025-06-01T03:00:00Z\r\n"
            + "stripe,cus_9,web.monthly,active,2025-06-20T00:00:00Z,,,,2025-06-01T03:00:00Z,2025-06-01T03:00:00Z\r\n"
        #expect(OrphansCSV.text(Self.orphans) == expected)
    }

    @Test("orphans.csv is written every run: header only when there is none")
    func headerOnly() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("orphans-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let folder = RunFolder(root: root, runID: "run-o")
        try folder.create()
        try folder.writeOrphans([])
        let text = try String(contentsOf: folder.url.appendingPathComponent("orphans.csv"), encoding: .utf8)
        #expect(text == "store,identifier,product_id,status,end_date,account_token,price,currency,first_seen,last_seen\r\n")
        try folder.writeOrphans(Self.orphans)
        let data = try Data(contentsOf: folder.url.appendingPathComponent("orphans.csv"))
        #expect(String(decoding: data, as: UTF8.self) == OrphansCSV.text(Self.orphans))
    }

    @Test("summary.json counts the orphans per store; the summaries show one line only when there are some")
    func summary() throws {
        var s = ReportFixtures.summary()
        let folder = URL(fileURLWithPath: "/tmp/reports/run")
        #expect(!TerminalSummary.text(s, folder: folder).contains("orphans"))
        #expect(!SummaryMarkdown.text(s).contains("Orphans"))
        s.orphans = RunSummary.Orphans(Self.orphans)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let json = String(decoding: try encoder.encode(s), as: UTF8.self)
        #expect(
            json.contains(
                #""orphans":{"by_store":{"google_play":1,"stripe":1},"count":2,"items":[{"identifier":"tok,\"a\"\r\nb","#
                    + #""product_id":"=premium","status":"billing_issue","store":"google_play"},{"end_date":"2025-06-20T00:00:00Z","#
                    + #""identifier":"cus_9","product_id":"web.monthly","status":"active","store":"stripe"}],"truncated":false}"#))
        let decoded = try JSONDecoder().decode(RunSummary.self, from: Data(json.utf8))
        #expect(decoded.orphans == s.orphans)
        #expect(s.withCountsCleared().orphans == s.orphans)
        let terminal = TerminalSummary.text(s, folder: folder).split(separator: "\n").filter { $0.contains("orphans") }
        #expect(terminal == ["  orphans     2 (google_play 1, stripe 1) paying purchases no user holds (orphans.csv)"])
        #expect(SummaryMarkdown.text(s).split(separator: "\n").filter { $0.hasPrefix("Orphans:") }.count == 1)
        #expect(SummaryHTML.render(s, history: []).contains("<p>Orphans: 2 (google_play 1, stripe 1)"))
    }

    @Test("summary.json names at most Orphans.listed orphans, in orphans.csv order, with the total")
    func boundedList() {
        let many = (0..<(RunSummary.Orphans.listed + 7)).map { index in
            Orphan(
                origin: .stripe, identifier: String(format: "cus_%04d", 9_999 - index), productID: "web", status: .active,
                endDate: nil, accountToken: nil, price: nil)
        }
        let orphans = RunSummary.Orphans(many)
        #expect(orphans.count == RunSummary.Orphans.listed + 7)
        #expect(orphans.items.count == RunSummary.Orphans.listed)
        #expect(orphans.truncated)
        #expect(orphans.items.first?.identifier == String(format: "cus_%04d", 9_999 - RunSummary.Orphans.listed - 6))
        #expect(orphans.items.map(\.identifier) == orphans.items.map(\.identifier).sorted())
    }
}
