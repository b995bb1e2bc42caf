import Foundation
import SubreconCore

/// `refund_review.csv`: `user_id, refunds, stores, first_refund, last_refund`, one line per user in user id order;
/// `stores` `;`-joined, dates ISO 8601 UTC. RFC 4180 with CRLF line ends; text a spreadsheet would run as a formula
/// gets a leading `'` (`CSV.spreadsheetText`). Header only when nobody is listed.
public enum RefundReviewCSV {
    public static let columns = ["user_id", "refunds", "stores", "first_refund", "last_refund"]

    public static func text(_ rows: [RefundReviewEntry]) -> String {
        var out = CSV.line(columns)
        for row in rows.sorted(by: { $0.userID < $1.userID }) {
            out += CSV.line([
                CSV.spreadsheetText(row.userID), String(row.refunds), CSV.spreadsheetText(row.stores.sorted().joined(separator: ";")),
                ISO8601.string(row.firstRefund), ISO8601.string(row.lastRefund),
            ])
        }
        return out
    }
}
