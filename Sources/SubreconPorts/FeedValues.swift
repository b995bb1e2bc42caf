import Foundation
import SubreconCore

/// The `users` column a store feed's identifiers are looked up in (CONTRACT "Which users a run asks about"): the contract's
/// `iap_original_transaction_id`, or a store's own identifier column as its adapter declares it.
public struct FeedColumn: Sendable, Hashable {
    /// The column's name: a trusted constant (the contract's, or an adapter's `IdentifierColumn`), never outside input.
    public let rawValue: String

    public static let appleOriginalTransactionID = FeedColumn(rawValue: "iap_original_transaction_id")

    public init(_ column: IdentifierColumn) { rawValue = column.name }
    private init(rawValue: String) { self.rawValue = rawValue }
}

/// How a feed's identifiers matched rows.
public struct FeedMatch: Sendable, Hashable {
    /// Users (rows) named by at least one identifier, added as candidates of the run.
    public var users: Int
    /// Distinct identifiers that match no row: counted, not acted on.
    public var unmatched: Int

    public init(users: Int, unmatched: Int) {
        self.users = users
        self.unmatched = unmatched
    }
}
