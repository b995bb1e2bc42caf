import Foundation
import SubreconCore

extension RunFolder {
    /// Writes the files that are derived from the summary alone, each atomically: `finance.csv`, `summary.md`,
    /// `summary.html` (with `history` for the revenue-at-risk chart) and `metrics.prom` (Prometheus text).
    public func writeDerivedReports(_ summary: RunSummary, history: [RunHistoryPoint], lastSuccess: Date?) throws {
        try write(Data(FinanceCSV.text(summary).utf8), to: "finance.csv")
        try write(Data(SummaryMarkdown.text(summary).utf8), to: "summary.md")
        try write(Data(SummaryHTML.render(summary, history: history).utf8), to: "summary.html")
        try write(Data(PrometheusExposition.text(summary, lastSuccess: lastSuccess).utf8), to: "metrics.prom")
    }
}
