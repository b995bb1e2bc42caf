import Foundation
import SubreconCore

/// `finance.csv`: the finance figures of `summary.json` (CONTRACT "Finance figures") as one long table a spreadsheet can pivot.
///
/// Columns: `run_id, section, store, currency, product_id, figure, count, value, unknown_price`.
/// - `section` `store_currency`: one line per store, currency and figure (`refunds`, `billing_issue_at_risk`,
///   `restored`); `value` is the sum of the source prices in that currency, `unknown_price` how many of the
///   `count` users had no price at the source (their currency is `unknown`). `product_id` is empty.
/// - `section` `family_shared` / `trial`: the same lines for family-shared purchases and free trials, which grant a
///   tier but are never revenue (CONTRACT "Finance figures"): `value` is always 0, `unknown_price` 0.
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
        for bucket in summary.finance.sortedBuckets {
            for (name, figure) in figures(bucket) {
                rows.append([
                    summary.runID, section(bucket.group), bucket.store, bucket.currency, "", name, String(figure.count),
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

    /// The `section` of a bucket's lines: `store_currency` for revenue, `family_shared` or `trial` for the rest.
    public static func section(_ group: FinanceFigures.Group) -> String {
        group == .revenue ? "store_currency" : group.rawValue
    }

    /// A bucket's group in words, for the summaries.
    public static func groupWords(_ group: FinanceFigures.Group) -> String {
        switch group {
        case .revenue: "revenue"
        case .familyShared: "family shared (not revenue, 0)"
        case .trial: "free trial (not revenue, 0)"
        }
    }

    /// The refund review count in words: `2 users with at least 3 refunds within 365 days`.
    public static func refundReviewWords(_ review: RunSummary.RefundReview) -> String {
        "\(review.users) user\(review.users == 1 ? "" : "s") with at least \(review.minimumRefunds) refund"
            + "\(review.minimumRefunds == 1 ? "" : "s") within \(review.days) days"
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
