import Foundation
import SubreconCore
import Testing

@testable import SubreconReports

/// A strict RFC 4180 reader written independently of the writer: bytes in, records of byte strings out. Records end
/// in CRLF; a field is either unquoted (no `"`, `,`, CR or LF at all) or quoted (`""` for a quote, then `,` or CRLF
/// right after the closing quote). Anything else is an error, so a sloppy writer cannot pass by accident.
enum StrictCSV {
    struct Malformed: Error, CustomStringConvertible {
        var offset: Int
        var why: String
        var description: String { "malformed CSV at byte \(offset): \(why)" }
    }

    static func parse(_ data: Data) throws -> [[String]] {
        let bytes = Array(data)
        let quote = UInt8(ascii: "\"")
        let comma = UInt8(ascii: ",")
        let cr = UInt8(ascii: "\r")
        let lf = UInt8(ascii: "\n")
        var records: [[String]] = []
        var record: [String] = []
        var i = 0
        while i < bytes.count {
            var field: [UInt8] = []
            if bytes[i] == quote {
                i += 1
                while true {
                    guard i < bytes.count else { throw Malformed(offset: i, why: "unterminated quoted field") }
                    if bytes[i] == quote {
                        if i + 1 < bytes.count, bytes[i + 1] == quote {
                            field.append(quote)
                            i += 2
                        } else {
                            i += 1
                            break
                        }
                    } else {
                        field.append(bytes[i])
                        i += 1
                    }
                }
            } else {
                while i < bytes.count, bytes[i] != comma, bytes[i] != cr {
                    if bytes[i] == quote || bytes[i] == lf { throw Malformed(offset: i, why: "quote or LF in an unquoted field") }
                    field.append(bytes[i])
                    i += 1
                }
            }
            guard let text = String(validating: field, as: UTF8.self) else { throw Malformed(offset: i, why: "not UTF-8") }
            record.append(text)
            guard i < bytes.count else { throw Malformed(offset: i, why: "last record without CRLF") }
            if bytes[i] == comma {
                i += 1
                continue
            }
            guard bytes[i] == cr, i + 1 < bytes.count, bytes[i + 1] == lf else { throw Malformed(offset: i, why: "expected CRLF") }
            i += 2
            records.append(record)
            record = []
        }
        return records
    }
}

@Suite("Reports are exact for any text: CSV and HTML decided on Unicode scalars")
struct ExactReportTextTests {
    static let hostileIDs: [String] = [
        "cr\rinside", "lf\ninside", "crlf\r\ninside", "quote\"inside", "\"", "\"\"", "comma\u{301},after", ",\u{301}",
        "\"\u{301}quote", "\r\n", "\n\"forged\",row\r\n", "=cmd|' /C calc'!A0", "+1", "-1", "@SUM(A1)", "\tTAB",
        "\u{0}nul", "é\u{301}\u{302}", "a,b\r\nc\"d", "", "plain",
    ]

    static func reportRow(_ id: String, product: String? = "premium_monthly", error: String? = nil) throws -> ReportRow {
        var object: [String: Any] = [
            "run_id": "r1", "user_id": id, "db_tier": 1, "db_status": "active", "action": "downgrade",
            "drift": "missed_renewal", "applied": true, "push_intent": "",
        ]
        object["product_id"] = product
        object["error"] = error
        return try JSONDecoder().decode(ReportRow.self, from: JSONSerialization.data(withJSONObject: object))
    }

    func writeAndRead<Row: Encodable & Sendable>(
        _ rows: [Row], columns: [String], fields: @escaping (Row) -> [String], name: String
    ) throws -> [[String]] {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("subrecon-exact-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let writer = try TableWriter(directory: folder, name: name, columns: columns, fields: fields)
        for row in rows { try writer.append(row) }
        try writer.finish()
        return try StrictCSV.parse(Data(contentsOf: folder.appendingPathComponent("\(name).csv")))
    }

    @Test("drift.csv written and re-read byte for byte: one record per row, every id exact", arguments: hostileIDs)
    func driftRoundTrip(id: String) throws {
        let rows = [
            try Self.reportRow("before"), try Self.reportRow(id, product: id, error: "source said: \(id)"),
            try Self.reportRow("after"),
        ]
        let records = try writeAndRead(rows, columns: ReportRow.columns, fields: \.csvFields, name: "drift")
        try #require(records.count == 4)
        #expect(records[0] == ReportRow.columns)
        #expect(ReportRow.columns.count == 17 && Array(ReportRow.columns.suffix(3)) == ["error", "sources", "candidate_reason"])
        try #require(records.dropFirst().map(\.count) == [ReportRow.columns.count, ReportRow.columns.count, ReportRow.columns.count])
        #expect(records[1][1] == "before" && records[3][1] == "after")
        // Exact, apart from a NUL (no database id holds one), which is written as the visible `\u0000`.
        let exact = SourceText.sanitized(id)
        #expect(records[2][1] == exact, "drift.csv keeps ids exact (no formula prefix)")
        #expect(records[2][3] == exact)
        #expect(records[2][14] == "source said: \(exact)")
    }

    @Test("push_intents.csv written and re-read exactly", arguments: hostileIDs)
    func intentRoundTrip(id: String) throws {
        let object: [String: Any] = [
            "run_id": "r1", "user_id": id, "kind": "tier_changed", "dedupe_key": "\(id)|tier_changed|none", "tier": 0,
        ]
        let row = try JSONDecoder().decode(IntentRow.self, from: JSONSerialization.data(withJSONObject: object))
        let records = try writeAndRead([row, row], columns: IntentRow.columns, fields: \.csvFields, name: "push_intents")
        #expect(records.count == 3)
        let exact = SourceText.sanitized(id)
        #expect(
            records.dropFirst().allSatisfy {
                $0.count == IntentRow.columns.count && $0[1] == exact && $0[4] == "\(exact)|tier_changed|none"
            })
    }

    @Test("CSV.field quotes a comma or quote followed by a combining mark, and CRLF")
    func fieldQuoting() {
        #expect(CSV.field(",\u{301}") == "\",\u{301}\"")
        #expect(CSV.field("\"\u{301}") == "\"\"\"\u{301}\"")
        #expect(CSV.field("a\r\nb") == "\"a\r\nb\"")
        #expect(CSV.field("plain") == "plain")
    }

    @Test(
        "finance.csv: text cells a spreadsheet would run get a leading quote; numbers and exact ids stay",
        arguments: [
            ("=1+1", "'=1+1"), ("+1", "'+1"), ("-1", "'-1"), ("@SUM(A1)", "'@SUM(A1)"), ("\tx", "'\tx"), ("\rx", "'\rx"),
            ("\nx", "'\nx"), ("premium_monthly", "premium_monthly"), ("a=b", "a=b"), ("\"=q\"", "\"=q\""),
        ])
    func financeFormulaGuard(product: String, expected: String) throws {
        var summary = ReportFixtures.summary()
        summary.finance.driftByProduct = [product: ["missed_refund": 2]]
        var bucket = FinanceFigures.Bucket(store: "app_store", currency: product)
        bucket.refunds.count = 1
        bucket.refunds.value = Decimal(string: "-4.5")!
        summary.finance.buckets = ["x": bucket]
        let records = try StrictCSV.parse(Data(FinanceCSV.text(summary).utf8))
        try #require(records.count == 5)
        try #require(records.allSatisfy { $0.count == FinanceCSV.columns.count })
        #expect(records[1][3] == expected, "currency cell")
        #expect(records[1][7] == "-4.5", "numbers are never prefixed")
        #expect(records[4][4] == expected, "product cell")
    }

    @Test("HTML escaping decides per scalar: markup after a combining mark is still escaped, NUL never reaches the page")
    func htmlEscaping() {
        #expect(SummaryHTML.esc("<\u{301}script>") == "&lt;\u{301}script&gt;")
        #expect(SummaryHTML.esc("&\u{301}amp;") == "&amp;\u{301}amp;")
        #expect(SummaryHTML.esc("\"\u{301}'\u{301}") == "&quot;\u{301}&#39;\u{301}")
        #expect(SummaryHTML.esc("a\u{0}b\u{7}c\r\nd") == "a\u{FFFD}b\u{FFFD}c\r\nd")
    }

    @Test("summary.html and summary.md hold hostile store names and error samples without breaking out")
    func summaries() {
        var summary = ReportFixtures.summary()
        var bucket = FinanceFigures.Bucket(store: "<\u{301}img src=x>", currency: "E|U\r\nR")
        bucket.refunds.count = 1
        summary.finance.buckets = ["x": bucket]
        summary.errorSamples = [.init(userID: "u`1\r\n# forged heading", drift: "fetch_error", error: "bad\r\n- forged item")]
        let html = SummaryHTML.render(summary, history: [])
        #expect(!html.contains("<\u{301}img"))
        #expect(html.contains("&lt;\u{301}img src=x&gt;"))
        let markdown = SummaryMarkdown.text(summary)
        let lines = markdown.components(separatedBy: "\n")
        #expect(!lines.contains { $0.hasPrefix("# forged") || $0.hasPrefix("- forged") })
        #expect(lines.contains { $0.contains("``u`1\\r\\n# forged heading``") && $0.contains("bad\\r\\n- forged item") })
        #expect(lines.contains { $0.contains("| E\\|U\\r\\nR |") })
    }
}
