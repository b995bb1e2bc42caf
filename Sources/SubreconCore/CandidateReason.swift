import Foundation

/// Why a user was a candidate of a run (SPEC 5.6 `candidate_reason`).
public enum CandidateReason: String, Sendable, Codable, Hashable, CaseIterable, Comparable {
    /// SPEC 5.1 rule 1: a tier whose paid period is over by the database's own account.
    case expired
    /// SPEC 5.1 rule 2: `subscription_status = 'billing_issue'`.
    case billingIssue = "billing_issue"
    /// SPEC 5.1 rule 3: recently lapsed (`expired`, `canceled`, `refunded` within the lookback).
    case lapsed
    /// Named by Apple's notification history.
    case appleNotification = "apple_notification"
    /// Named by Google Play's voided purchases.
    case googleVoided = "google_voided"
    /// Named by a Stripe event.
    case stripeEvent = "stripe_event"
    /// The rolling sweep's share of tier holders tonight.
    case sweep
    /// Listed in `--users-file`.
    case usersFile = "users_file"
    /// A `--mode backfill` run.
    case backfill

    public static func < (lhs: CandidateReason, rhs: CandidateReason) -> Bool {
        allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
    }

    /// The SPEC 5.1 rules `row` meets at `asOf` (the database's own account), in rule order.
    public static func nightlyRules(row: UserRow, asOf: Date, lookbackDays: Int) -> [CandidateReason] {
        var reasons: [CandidateReason] = []
        if row.currentTier > 0, let end = row.endDate, end < asOf, !(row.graceEndsAt.map { $0 > asOf } ?? false) {
            reasons.append(.expired)
        }
        if row.statusText == SubscriptionStatus.billingIssue.rawValue { reasons.append(.billingIssue) }
        let since = asOf.addingTimeInterval(-Double(lookbackDays) * 86_400)
        if ["expired", "canceled", "refunded"].contains(row.statusText), let end = row.endDate, end >= since {
            reasons.append(.lapsed)
        }
        return reasons
    }
}
