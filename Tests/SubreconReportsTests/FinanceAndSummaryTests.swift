import Foundation
import SubreconCore
import SubreconReports
import Testing

#if canImport(FoundationXML)
    import FoundationXML
#endif

@Suite("Finance CSV, summary.md and summary.html")
struct FinanceAndSummaryTests {
    @Test("finance.csv lists every store and currency figure, then drift per product, in a stable order")
    func financeCSV() {
        let text = FinanceCSV.text(ReportFixtures.summary())
        let r = "20250601T031500Z-ab12"
        let expected = [
            "run_id,section,store,currency,product_id,figure,count,value,unknown_price",
            "\(r),store_currency,app_store,USD,,refunds,1,9.99,0",
            "\(r),store_currency,app_store,USD,,billing_issue_at_risk,1,19.99,0",
            "\(r),store_currency,app_store,USD,,restored,0,0,0",
            "\(r),store_currency,app_store,unknown,,refunds,0,0,0",
            "\(r),store_currency,app_store,unknown,,billing_issue_at_risk,1,0,1",
            "\(r),store_currency,app_store,unknown,,restored,0,0,0",
            "\(r),store_currency,play_store,EUR,,refunds,0,0,0",
            "\(r),store_currency,play_store,EUR,,billing_issue_at_risk,0,0,0",
            "\(r),store_currency,play_store,EUR,,restored,1,49.99,0",
            "\(r),product_drift,,,premium_monthly,missed_renewal,3,,",
            "\(r),product_drift,,,premium_monthly,billing_issue_entered,2,,",
            "\(r),product_drift,,,pro_monthly,missed_refund,1,,",
        ].map { $0 + "\r\n" }.joined()
        #expect(text == expected)
    }

    @Test("summary.md states the night in a few lines with the finance table")
    func markdown() {
        let text = SummaryMarkdown.text(ReportFixtures.summary())
        #expect(text.contains("**Completed with 1 user error (left untouched, listed in drift.csv).**"))
        #expect(text.contains("- 7 users checked, 4 rows corrected, errors: 1,"))
        #expect(text.contains("| play_store | EUR | revenue | 0 | 0 | 1 (49.99) | 0 |"))
        #expect(text.contains("| app_store | unknown | revenue | 0 | 1 (0) | 0 | 1 |"))
        #expect(text.split(separator: "\n").count < 30)
    }

    @Test("summary.html is well-formed, has no script or external resource, and shows the figures and history")
    func html() throws {
        let summary = ReportFixtures.summary()
        let history = (1...3).map { n in
            RunHistoryPoint(
                runID: "past-\(n)", startedAt: ISO8601.date("2025-05-2\(n)T03:15:00Z")!, status: .completed,
                atRisk: ["USD": Decimal(n) * 10], atRiskUsers: n)
        }
        let html = SummaryHTML.render(summary, history: history)
        let parser = XMLParser(data: Data(html.utf8))
        #expect(parser.parse(), "not well-formed: \(String(describing: parser.parserError))")
        #expect(!html.lowercased().contains("<script"))
        for external in ["src=", "href=", "url(", "@import", "<link", "<img", "<iframe"] { #expect(!html.contains(external)) }
        #expect(html.contains("<svg"))
        #expect(html.contains(">missed_renewal</text>"))
        #expect(html.contains("<td>49.99</td>"))
        #expect(html.contains("<title>past-2: 20 USD</title>"))
        #expect(html.contains("<title>20250601T031500Z-ab12: 19.99 USD</title>"))
        #expect(html.contains("Revenue at risk (billing issue), last 4 runs"))
        #expect(html.contains("weird &quot;source&quot;"))
    }

    @Test("history keeps the last 30 runs, oldest first, with the current run once")
    func historyMerge() {
        let points = (0..<40).map { n in
            RunHistoryPoint(
                runID: "r\(n)", startedAt: Date(timeIntervalSince1970: Double(n) * 86_400), status: .completed, atRisk: [:], atRiskUsers: 0
            )
        }
        let current = RunHistoryPoint(
            runID: "r39", startedAt: Date(timeIntervalSince1970: 39 * 86_400), status: .completed, atRisk: ["USD": 1], atRiskUsers: 1)
        let merged = RunHistoryPoint.merged(points, current: current)
        #expect(merged.count == 30)
        #expect(merged.first?.runID == "r10")
        #expect(merged.last == current)
    }
}
