import Foundation
import SubreconCore

/// One user on the refund review list (SPEC 5.7): a list for a person to look at, never a tier action.
public struct RefundReviewRow: Sendable, Hashable {
    public var userID: String
    public var refunds: Int
    public var stores: [String]
    public var firstRefund: Date
    public var lastRefund: Date

    public init(userID: String, refunds: Int, stores: [String], firstRefund: Date, lastRefund: Date) {
        self.userID = userID
        self.refunds = refunds
        self.stores = stores
        self.firstRefund = firstRefund
        self.lastRefund = lastRefund
    }
}

/// `refund_review.csv`: `user_id, refunds, stores, first_refund, last_refund`, one line per user in user id order;
/// `stores` `;`-joined, dates ISO 8601 UTC. RFC 4180 with CRLF line ends; text a spreadsheet would run as a formula
/// gets a leading `'` (`CSV.spreadsheetText`). Header only when nobody is listed.
public enum RefundReviewCSV {
    public static let columns = ["user_id", "refunds", "stores", "first_refund", "last_refund"]

    public static func text(_ rows: [RefundReviewRow]) -> String {
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
