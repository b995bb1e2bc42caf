import Foundation

/// The refunds tonight's feeds stated for identifiers no row holds (CONTRACT "Sources and the decision": a refund is a
/// fact about its line), indexed by the identifier the entry named and by every line form of its store transaction
/// (`StoreKind.lineKeys`): a lookup whose line names one of them (a Google token's `linkedPurchaseToken`, an order of
/// the line) reads it by the line's own keys, never by product or date. Built once by the feed phase and shared, not
/// copied, by every row of the run (`UserRow.unclaimedFeedRefunds`): its size is the feed's, not the users'.
public final class UnclaimedFeedRefunds: Sendable {
    /// By store, then by key: the refunds naming that key.
    private let byKey: [String: [String: [FeedRefundFact]]]
    /// How many refunds it holds.
    public let count: Int

    /// None: a run that read no feed, or a resumed run (CONTRACT "Ledger, resume and stopping": only the refunds a row
    /// held are kept for it).
    public static let empty = UnclaimedFeedRefunds([])

    public init(_ refunds: [FeedRefundFact]) {
        var byKey: [String: [String: [FeedRefundFact]]] = [:]
        var seen = Set<FeedRefundFact>()
        for refund in refunds where seen.insert(refund).inserted {
            let store = StoreKind(rawValue: refund.refund.store)
            var keys = Set(store.lineKeys(of: refund.refund.transactionID))
            if let identifier = refund.identifier, !identifier.isEmpty { keys.insert(identifier) }
            for key in keys { byKey[store.rawValue, default: [:]][key, default: []].append(refund) }
        }
        self.byKey = byKey
        self.count = seen.count
    }

    public var isEmpty: Bool { count == 0 }

    /// The refunds of `store` whose identifier or store transaction (in any of its line forms) is one of `keys`,
    /// once each, oldest first (then by store transaction).
    public func naming(_ keys: some Sequence<String>, store: StoreKind) -> [FeedRefundFact] {
        guard let index = byKey[store.rawValue] else { return [] }
        let found = Set(keys.flatMap { index[$0] ?? [] })
        return found.sorted { ($0.refund.refundedAt, $0.refund.transactionID) < ($1.refund.refundedAt, $1.refund.transactionID) }
    }
}

extension UnclaimedFeedRefunds: Equatable, Hashable {
    /// Context every row of a run shares, not part of a row's value: rows compare and hash without it, as a stored
    /// verdict keeps it not (`UserRow.CodingKeys`).
    public static func == (lhs: UnclaimedFeedRefunds, rhs: UnclaimedFeedRefunds) -> Bool { true }

    public func hash(into hasher: inout Hasher) {}
}
