import Foundation
import SubreconCore

/// `finance-FROM-TO.csv` and `finance-FROM-TO-details.csv` (docs/CONTRACT.md, "subrecon finance"): RFC 4180, CRLF, text
/// cells a spreadsheet would run as a formula written with a leading `'` (`CSV.spreadsheetText`), numbers as they are.
public enum FinancePeriodCSV {
    public static let columns = [
        "section", "figure", "store", "currency", "price_basis", "count", "value", "unknown_price", "shard", "night", "run_ids",
    ]
    public static let detailColumns = [
        "section", "figure", "user_id", "store", "reference", "run_id", "instant", "amount", "currency", "price_basis", "cause",
        "shard", "night",
    ]
    /// The numeric columns of each file, never changed.
    static let numericColumns: Set<String> = ["count", "value", "unknown_price", "amount"]

    /// The whole summary file: the flows, the stocks, then one line per gap (section `gap`, `figure` its kind).
    public static func text(_ report: FinancePeriodReport) -> String {
        var out = CSV.line(columns)
        for line in report.flows { out += row(section: "flow", line) }
        for line in report.stocks { out += row(section: "stock", line) }
        for gap in report.gaps {
            out += safe(["gap", gap.kind, "", "", "", "", "", "", gap.shard, gap.night, gap.runIDs.joined(separator: ";")], columns)
        }
        return out
    }

    static func row(section: String, _ line: FinanceLine) -> String {
        let k = line.key
        return safe(
            [
                section, k.figure, k.store, k.currency, k.basis, String(line.count), FinanceCSV.decimalString(line.value),
                String(line.unknownPrice), k.shard ?? "", k.night ?? "", "",
            ], columns)
    }

    /// The details file's header.
    public static var detailHeader: String { CSV.line(detailColumns) }

    /// One details line.
    public static func detailLine(_ d: FinanceDetail) -> String {
        safe(
            [
                d.section.rawValue, d.figure, d.userID, d.store, d.reference, d.runID, ISO8601.string(d.instant),
                d.amount.map(FinanceCSV.decimalString) ?? "", d.currency, d.basis, d.cause, d.shard ?? "", d.night ?? "",
            ], detailColumns)
    }

    /// A gap in the details file: section `gap`, `figure` its kind, the run ids in `run_id`.
    public static func detailGapLine(_ gap: FinanceGap) -> String {
        safe(["gap", gap.kind, "", "", "", gap.runIDs.joined(separator: ";"), "", "", "", "", "", gap.shard, gap.night], detailColumns)
    }

    static func safe(_ fields: [String], _ names: [String]) -> String {
        CSV.line(fields.enumerated().map { numericColumns.contains(names[$0.offset]) ? $0.element : CSV.spreadsheetText($0.element) })
    }
}
