import Foundation

/// Why a user was a candidate of a run (CONTRACT "Reports" `candidate_reason`).
///
/// The rule reasons are named here; a store feed's reason (`apple_notification`, `google_voided`, `stripe_event`) is
/// declared by the store's adapter with `feed(_:)`. Reasons sort rules first, then feeds (by name), then the sweep,
/// `--users-file` and backfill.
public struct CandidateReason: RawRepresentable, Sendable, Codable, Hashable, Comparable, CustomStringConvertible {
    public let rawValue: String

    /// A reason as stored (`reconcile_run_candidates.reasons`): lower-case letters, digits and `_`, 1 to 64 of them;
    /// nil for anything else.
    public init?(rawValue: String) {
        let bytes = Array(rawValue.utf8)
        guard (1...64).contains(bytes.count), bytes.allSatisfy({ (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == 0x5F })
        else { return nil }
        self.rawValue = rawValue
    }

    private init(known: String) { rawValue = known }

    /// CONTRACT "Which users a run asks about" rule 1: a tier whose paid period is over by the database's own account.
    public static let expired = CandidateReason(known: "expired")
    /// CONTRACT "Which users a run asks about" rule 2: `subscription_status = 'billing_issue'`.
    public static let billingIssue = CandidateReason(known: "billing_issue")
    /// CONTRACT "Which users a run asks about" rule 3: recently lapsed (`expired`, `canceled`, `refunded` within the lookback).
    public static let lapsed = CandidateReason(known: "lapsed")
    /// The rolling sweep's share of tier holders tonight.
    public static let sweep = CandidateReason(known: "sweep")
    /// The sweep of rows holding no tier tonight (`--sweep-free-days`, CONTRACT "Which users a run asks about", "Whose purchase it is").
    public static let sweepFree = CandidateReason(known: "sweep_free")
    /// A purchase no row named, whose store named this user's account (CONTRACT "Whose purchase it is" linking).
    public static let linkedPurchase = CandidateReason(known: "linked_purchase")
    /// Listed in `--users-file`.
    public static let usersFile = CandidateReason(known: "users_file")
    /// A `--mode backfill` run.
    public static let backfill = CandidateReason(known: "backfill")

    /// Named by a store's event feed or inventory: the reason its adapter declares (a constant of the adapter, checked here).
    public static func feed(_ name: StaticString) -> CandidateReason {
        CandidateReason(rawValue: "\(name)") ?? CandidateReason(known: "feed")
    }

    /// The reasons that are not a feed's, in order.
    public static let ruleReasons: [CandidateReason] = [.expired, .billingIssue, .lapsed]
    static let afterFeeds: [CandidateReason] = [.sweep, .sweepFree, .linkedPurchase, .usersFile, .backfill]

    /// True for a reason a store feed gave.
    public var isFeed: Bool { !Self.ruleReasons.contains(self) && !Self.afterFeeds.contains(self) }

    private var rank: Int {
        if let index = Self.ruleReasons.firstIndex(of: self) { return index }
        if let index = Self.afterFeeds.firstIndex(of: self) { return 10 + index }
        return 5
    }

    public static func < (lhs: CandidateReason, rhs: CandidateReason) -> Bool {
        (lhs.rank, lhs.rawValue) < (rhs.rank, rhs.rawValue)
    }

    public var description: String { rawValue }
}
