import Foundation
import SubreconCore

/// `finance.csv`: the finance figures of `summary.json` (SPEC 5.7) as one long table a spreadsheet can pivot.
///
/// Columns: `run_id, section, store, currency, product_id, figure, count, value, unknown_price`.
/// - `section` `store_currency`: one line per store, currency and figure (`refunds`, `billing_issue_at_risk`,
///   `restored`); `value` is the sum of the source prices in that currency, `unknown_price` how many of the
///   `count` users had no price at the source (their currency is `unknown`). `product_id` is empty.
/// - `section` `product_drift`: one line per product and drift kind; `figure` is the drift kind, `count` the users;
///   `store`, `currency`, `value`, `unknown_price` are empty.
///
/// Lines are sorted (store, currency, figure order; then product, drift order) so two nights can be diffed.
public enum FinanceCSV {
    public static let columns = ["run_id", "section", "store", "currency", "product_id", "figure", "count", "value", "unknown_price"]

    /// The figures of a bucket in report order.
    public static func figures(_ bucket: FinanceFigures.Bucket) -> [(name: String, figure: FinanceFigures.Figure)] {
        [("refunds", bucket.refunds), ("billing_issue_at_risk", bucket.billingIssueAtRisk), ("restored", bucket.restored)]
    }

    /// Columns holding text (the rest are numbers, written as they are).
    static let textColumns = 0..<6

    /// The whole file (header included), RFC 4180 with CRLF line ends. Text cells that a spreadsheet would run as a
    /// formula (leading `=`, `+`, `-`, `@`, TAB, CR, LF: product ids and currencies come from the stores) are written
    /// with a leading `'` (`CSV.spreadsheetText`); numbers are never changed.
    public static func text(_ summary: RunSummary) -> String {
        var out = CSV.line(columns)
        for row in rows(summary) {
            out += CSV.line(row.enumerated().map { textColumns.contains($0.offset) ? CSV.spreadsheetText($0.element) : $0.element })
        }
        return out
    }

    /// The data lines, in order, as fields.
    public static func rows(_ summary: RunSummary) -> [[String]] {
        var rows: [[String]] = []
        let buckets = summary.finance.buckets.values.sorted { ($0.store, $0.currency) < ($1.store, $1.currency) }
        for bucket in buckets {
            for (name, figure) in figures(bucket) {
                rows.append([
                    summary.runID, "store_currency", bucket.store, bucket.currency, "", name, String(figure.count),
                    decimalString(figure.value), String(figure.unknownPrice),
                ])
            }
        }
        for product in summary.finance.driftByProduct.keys.sorted() {
            let counts = summary.finance.driftByProduct[product] ?? [:]
            for kind in counts.keys.sorted(by: driftOrder) where (counts[kind] ?? 0) > 0 {
                rows.append([summary.runID, "product_drift", "", "", product, kind, String(counts[kind] ?? 0), "", ""])
            }
        }
        return rows
    }

    /// A decimal in plain notation (`29.97`, `0`), exactly as summed, never rounded by a float.
    public static func decimalString(_ value: Decimal) -> String {
        var value = value
        return NSDecimalString(&value, Locale(identifier: "en_US_POSIX"))
    }

    /// Drift kinds in the order of `Drift.allCases`; unknown names after them, alphabetically.
    static func driftOrder(_ a: String, _ b: String) -> Bool {
        let ia = Drift(rawValue: a).flatMap { Drift.allCases.firstIndex(of: $0) } ?? Int.max
        let ib = Drift(rawValue: b).flatMap { Drift.allCases.firstIndex(of: $0) } ?? Int.max
        return ia == ib ? a < b : ia < ib
    }
}
