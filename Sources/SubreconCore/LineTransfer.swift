import Foundation

/// A purchase line RevenueCat lists in one user's answer while other rows name it (CONTRACT "Whose purchase it is":
/// a `TRANSFER`, a restore on another account): the listing user owns it. Their change writes the identifier into
/// their row; each other row naming it is `ownership_conflict` for the night (untouched, listed for a person).
public struct LineTransfer: Sendable, Hashable, Codable {
    /// The source whose column holds `identifier` (`appStore`: `iap_original_transaction_id`).
    public var origin: FactOrigin
    /// The line's identifier as the rows hold it.
    public var identifier: String
    /// The user RevenueCat lists the line under.
    public var owner: String
    /// The other rows naming the line, by user id.
    public var holders: [String]

    public init(origin: FactOrigin, identifier: String, owner: String, holders: [String]) {
        self.origin = origin
        self.identifier = identifier
        self.owner = owner
        self.holders = holders
    }
}

extension Verdict {
    /// The verdict of a row naming a line another user owns tonight (`transfers` name it among their holders):
    /// untouched, `ownership_conflict`, listed for a person, whatever its own sources said.
    public static func transferred(_ row: UserRow, by transfers: [LineTransfer]) -> Verdict {
        let named = transfers.filter { $0.holders.contains(row.id) }.sorted { ($0.identifier, $0.owner) < ($1.identifier, $1.owner) }
        return Verdict(row: row, truth: nil, action: .skipped, drift: [.ownershipConflict], error: .ownedElsewhere(named))
    }
}
