import Foundation
import SubreconCore

/// The printed table and `finance-FROM-TO.md` of a finance period (docs/CONTRACT.md, "subrecon finance").
public enum FinancePeriodText {
    /// The period in words: `2026-11-01T00:00:00Z … 2026-12-01T00:00:00Z`.
    public static func period(_ r: FinancePeriodReport) -> String { "\(ISO8601.string(r.from)) … \(ISO8601.string(r.to))" }

    /// The short table `subrecon finance` prints.
    public static func table(_ r: FinancePeriodReport, folder: URL?) -> String {
        var lines = ["finance \(period(r)): \(r.runsCounted.count) run\(r.runsCounted.count == 1 ? "" : "s") counted"]
        lines.append(columns(["figure", "store", "currency", "basis", "count", "value", "unknown"]))
        for line in r.flows { lines.append(tableLine(line.key.figure, line)) }
        for line in r.stocks {
            lines.append(tableLine("\(line.key.figure) (\(line.key.shard ?? "") on \(line.key.night ?? ""))", line))
        }
        if r.flows.isEmpty && r.stocks.isEmpty { lines.append("(no flow and no stock in the period)") }
        lines.append(gapWords(r))
        if let folder { lines.append("reports: \(folder.path)") }
        return TerminalText.lines(lines)
    }

    static func tableLine(_ name: String, _ line: FinanceLine) -> String {
        columns([
            name, line.key.store, line.key.currency, line.key.basis, String(line.count), FinanceCSV.decimalString(line.value),
            String(line.unknownPrice),
        ])
    }

    /// The table's cells padded to their widths: text left, numbers right.
    static func columns(_ cells: [String]) -> String {
        let widths = [34, 12, 8, 13, 7, 14, 8]
        return cells.enumerated().map { i, cell in
            let pad = String(repeating: " ", count: max(0, widths[min(i, widths.count - 1)] - cell.count))
            return i < 4 ? cell + pad : pad + cell
        }.joined(separator: " ")
    }

    /// `no gaps: every night of every shard completed`, or the gaps counted and listed.
    public static func gapWords(_ r: FinancePeriodReport) -> String {
        guard !r.gaps.isEmpty else { return "no gaps: every night of every shard completed" }
        let list = r.gaps.prefix(20).map { "\($0.night) \($0.shard) \($0.kind)" }.joined(separator: ", ")
        return "\(r.gaps.count) gap\(r.gaps.count == 1 ? "" : "s") (figures cover the completed nights only): \(list)"
            + (r.gaps.count > 20 ? ", …" : "")
    }

    /// `finance-FROM-TO.md`.
    public static func markdown(_ r: FinancePeriodReport) -> String {
        var md = "# Finance \(period(r))\n\n"
        md += "Runs counted: \(r.runsCounted.count). Not counted: \(r.runsNotCounted.count)"
        md += r.runsNotCounted.isEmpty ? ".\n\n" : " (\(r.runsNotCounted.map { "\($0.runID) \($0.reason)" }.joined(separator: ", "))).\n\n"
        md += "**\(gapWords(r))**\n\n"
        md += "## Flows (counted once each)\n\n" + markdownTable(r.flows, stock: false)
        md += "\n## Stocks (as of each shard's last completed night)\n\n" + markdownTable(r.stocks, stock: true)
        if !r.gaps.isEmpty {
            md += "\n## Gaps\n\n| night | shard | kind | runs |\n| --- | --- | --- | --- |\n"
            for gap in r.gaps { md += "| \(gap.night) | \(gap.shard) | \(gap.kind) | \(cell(gap.runIDs.joined(separator: ", "))) |\n" }
        }
        return md
    }

    static func markdownTable(_ lines: [FinanceLine], stock: Bool) -> String {
        guard !lines.isEmpty else { return "none\n" }
        var md = "| figure | store | currency | basis |\(stock ? " shard | night |" : "") count | value | unknown price |\n"
        md += "| --- | --- | --- | --- |\(stock ? " --- | --- |" : "") ---: | ---: | ---: |\n"
        for l in lines {
            let k = l.key
            md += "| \(cell(k.figure)) | \(cell(k.store)) | \(cell(k.currency)) | \(cell(k.basis)) |"
            if stock { md += " \(cell(k.shard ?? "")) | \(cell(k.night ?? "")) |" }
            md += " \(l.count) | \(FinanceCSV.decimalString(l.value)) | \(l.unknownPrice) |\n"
        }
        return md
    }

    static func cell(_ text: String) -> String {
        SourceText.sanitized(text).replacingOccurrences(of: "|", with: "\\|").replacingOccurrences(of: "\n", with: " ")
    }
}
