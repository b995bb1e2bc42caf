import Foundation
import SubreconCore

/// `orphans.csv` (CONTRACT "Reports", "Whose purchase it is"): the unlinked purchases that entitle today and name no known account, as kept
/// across nights: `store, identifier, product_id, status, end_date, account_token, price, currency, first_seen,
/// last_seen`, one line per store and identifier in that order. Every value exact (RFC 4180 with CRLF line ends: a
/// comma, quote, CR or LF in an identifier or token is quoted, never changed); dates ISO 8601 UTC; an unknown end
/// date, account or price is empty. Header only when there is none: written every run.
public enum OrphansCSV {
    public static let columns = [
        "store", "identifier", "product_id", "status", "end_date", "account_token", "price", "currency", "first_seen",
        "last_seen",
    ]

    public static func text(_ orphans: [Orphan]) -> String {
        var out = CSV.line(columns)
        for orphan in orphans.sorted(by: { ($0.origin.rawValue, $0.identifier) < ($1.origin.rawValue, $1.identifier) }) {
            out += CSV.line(fields(orphan))
        }
        return out
    }

    /// One line's fields, in `columns` order.
    public static func fields(_ orphan: Orphan) -> [String] {
        [
            orphan.origin.rawValue, orphan.identifier, orphan.productID, orphan.status.rawValue,
            orphan.endDate.map(ISO8601.string) ?? "", orphan.accountToken ?? "",
            orphan.price.map { FinanceCSV.decimalString($0.amount) } ?? "", orphan.price?.currency ?? "",
            orphan.firstSeen.map(ISO8601.string) ?? "", orphan.lastSeen.map(ISO8601.string) ?? "",
        ]
    }
}

extension RunFolder {
    /// Writes `orphans.csv` atomically (header only when `orphans` is empty): every run, so the folder always says.
    public func writeOrphans(_ orphans: [Orphan]) throws {
        try write(Data(OrphansCSV.text(orphans).utf8), to: "orphans.csv")
    }
}

extension RunSummary {
    /// The orphans of the run (`orphans.csv`, CONTRACT "Reports"): how many, how many per store, and the first
    /// `listed` of them (in `orphans.csv` order) by store, identifier, product, status and end.
    public struct Orphans: Sendable, Codable, Hashable {
        /// At most this many orphans are named in `summary.json`; `count` is always the total.
        public static let listed = 100

        public var count: Int
        /// By store (`app_store`, `google_play`, `stripe`).
        public var byStore: [String: Int]
        /// The first `listed` orphans, in `orphans.csv` order.
        public var items: [Item]
        /// True when `items` names fewer than `count`.
        public var truncated: Bool

        /// One orphan as `summary.json` names it.
        public struct Item: Sendable, Codable, Hashable {
            public var store: String
            public var identifier: String
            public var productID: String
            public var status: String
            /// ISO 8601 UTC; nil for a purchase without an end (lifetime).
            public var endDate: String?

            enum CodingKeys: String, CodingKey {
                case store, identifier, status
                case productID = "product_id"
                case endDate = "end_date"
            }
        }

        public init(_ orphans: [Orphan]) {
            count = orphans.count
            byStore = Dictionary(orphans.map { ($0.origin.rawValue, 1) }, uniquingKeysWith: +)
            let ordered = orphans.sorted { ($0.origin.rawValue, $0.identifier) < ($1.origin.rawValue, $1.identifier) }
            items = ordered.prefix(Self.listed).map { orphan in
                Item(
                    store: orphan.origin.rawValue, identifier: orphan.identifier, productID: orphan.productID,
                    status: orphan.status.rawValue, endDate: orphan.endDate.map(ISO8601.string))
            }
            truncated = orphans.count > Self.listed
        }

        enum CodingKeys: String, CodingKey {
            case count, items, truncated
            case byStore = "by_store"
        }

        /// `3 (app_store 2, stripe 1)`, stores in name order.
        public var words: String {
            "\(count) (" + byStore.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ") + ")"
        }
    }
}
