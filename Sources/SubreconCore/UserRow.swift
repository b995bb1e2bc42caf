import Foundation

/// The `subscription_status` values of CONTRACT "Database".
public enum SubscriptionStatus: String, Sendable, Codable, CaseIterable, Hashable {
    case none
    case active
    case canceled
    case billingIssue = "billing_issue"
    case expired
    case refunded
    case paused
}

/// A row of the `users` table as the job read it.
///
/// `updatedAtMicros` is `updated_at` as microseconds since the UNIX epoch, read exactly from
/// PostgreSQL so that the compare-and-set on write compares the very value that was read.
public struct UserRow: Sendable, Equatable, Hashable, Codable {
    public var id: String
    public var currentTier: Int
    /// The raw status text; `status` is its typed view (nil for a value outside CONTRACT "Database").
    public var statusText: String
    public var endDate: Date?
    public var graceEndsAt: Date?
    public var source: String?
    public var productID: String?
    public var originalTransactionID: String?
    public var autoRenew: Bool?
    public var updatedAtMicros: Int64
    /// The stores' own identifiers the row holds, by the source that asks with them (each store's `users` column,
    /// `IdentifierColumn`, declared by its adapter); a column absent, NULL, empty or whitespace only is no entry
    /// (`storedIdentifier`). Read, never written.
    public var identifiers: [FactOrigin: String]
    /// Why the row could not be read (a NULL where the contract says not null, through an app's view), naming the
    /// column; nil for a readable row. An unreadable row is that user's `row_error`: reported, never asked about,
    /// never written (CONTRACT "Hostile answers and bounded work"). Its other fields are then placeholders and mean nothing.
    public var rowError: String?
    /// The row's optional `account_token` (CONTRACT "Database", "Whose purchase it is"): what the app hands the stores as the buyer's account when it
    /// is not the user id; nil when the column is absent, NULL, empty or whitespace only.
    public var accountToken: String?
    /// Store identifiers linked to this user tonight and not (yet) in the row (CONTRACT "Whose purchase it is" linking: a feed entry or an
    /// inventory subscription whose store named the user's account), by the source that asks with them.
    public var links: [FactOrigin: String] = [:]
    /// Why a run's candidate scan selected this row (CONTRACT "Reports" `candidate_reason`): the rules, feeds and
    /// sweeps it met, as the candidate query stated them; empty for a row read otherwise.
    public var candidateReasons: [CandidateReason] = []
    /// The refunds tonight's feeds stated for the identifiers this row holds (CONTRACT "Finance figures": those a feed keeps in
    /// `refunds_seen`): a lookup of the purchase they name then reads it refunded (Google's voids, CONTRACT "Sources and the
    /// decision"). They travel with the row as its links do; empty for a row no feed named.
    public var feedRefunds: [FeedRefundFact] = []
    /// The refunds tonight's feeds stated for identifiers no row holds, one index every row of the run shares (never a
    /// copy per row): a lookup reads those its line's own keys name (CONTRACT "Sources and the decision"). None in a
    /// resumed run, which reads no feed again; rows compare without it.
    public var unclaimedFeedRefunds: UnclaimedFeedRefunds = .empty

    /// What a stored verdict keeps of the row: everything but `candidateReasons`, which the verdict carries itself, and
    /// `feedRefunds` and `unclaimedFeedRefunds`, which the verdict's facts already judged.
    private enum CodingKeys: String, CodingKey {
        case id, currentTier, statusText, endDate, graceEndsAt, source, productID, originalTransactionID, autoRenew
        case updatedAtMicros, identifiers, rowError, accountToken, links
    }

    public init(
        id: String, currentTier: Int, status: String, endDate: Date? = nil, graceEndsAt: Date? = nil,
        source: String? = nil, productID: String? = nil, originalTransactionID: String? = nil,
        autoRenew: Bool? = nil, updatedAtMicros: Int64 = 0, identifiers: [FactOrigin: String] = [:]
    ) {
        self.identifiers = identifiers.compactMapValues(Self.storedIdentifier)
        self.id = id
        self.currentTier = currentTier
        self.statusText = status
        self.endDate = endDate
        self.graceEndsAt = graceEndsAt
        self.source = source
        self.productID = productID
        self.originalTransactionID = originalTransactionID
        self.autoRenew = autoRenew
        self.updatedAtMicros = updatedAtMicros
    }

    public var status: SubscriptionStatus? { SubscriptionStatus(rawValue: statusText) }

    /// A store identifier or account as a `users` row stores it, read once at the database edge (docs/CONTRACT.md,
    /// Database): NULL, empty or whitespace only is none (an app's "no purchase", never a value that could be linked
    /// or be in conflict); any other value exactly as stored (an Apple token's case is compared where it is used).
    public static func storedIdentifier(_ stored: String?) -> String? {
        guard let stored, !stored.allSatisfy(\.isWhitespace) else { return nil }
        return stored
    }
}

/// The values subrecon writes back into a `users` row.
public struct Entitlement: Sendable, Equatable, Hashable, Codable {
    public var tier: Int
    public var status: SubscriptionStatus
    public var endDate: Date?
    public var graceEndsAt: Date?
    public var source: String?
    public var productID: String?
    public var originalTransactionID: String?
    public var autoRenew: Bool?
    /// The stores' identifier columns other than Apple's (`UserRow.identifiers`), as they are (the row) or will be
    /// (a truth: the row's, with a linked or newer identifier of the same store written over it, CONTRACT "Whose purchase it is").
    public var storeIdentifiers: [FactOrigin: String] = [:]

    public init(
        tier: Int, status: SubscriptionStatus, endDate: Date?, graceEndsAt: Date?, source: String?,
        productID: String?, originalTransactionID: String?, autoRenew: Bool?, storeIdentifiers: [FactOrigin: String] = [:]
    ) {
        self.storeIdentifiers = storeIdentifiers
        self.tier = tier
        self.status = status
        self.endDate = endDate
        self.graceEndsAt = graceEndsAt
        self.source = source
        self.productID = productID
        self.originalTransactionID = originalTransactionID
        self.autoRenew = autoRenew
    }
}

extension UserRow {
    /// The row's current values in the shape subrecon writes.
    public var entitlement: Entitlement {
        Entitlement(
            tier: currentTier, status: status ?? .none, endDate: endDate, graceEndsAt: graceEndsAt, source: source,
            productID: productID, originalTransactionID: originalTransactionID, autoRenew: autoRenew,
            storeIdentifiers: identifiers)
    }
}

/// A refund a store feed stated tonight for an identifier a row holds (`UserRow.feedRefunds`).
public struct FeedRefundFact: Sendable, Hashable {
    /// The identifier the feed's entry named (a Google purchase token, …); nil when a resumed run read the refund back
    /// from `refunds_seen`, which keeps it by store transaction only.
    public var identifier: String?
    public var refund: SeenRefund

    public init(identifier: String?, refund: SeenRefund) {
        self.identifier = identifier
        self.refund = refund
    }
}
