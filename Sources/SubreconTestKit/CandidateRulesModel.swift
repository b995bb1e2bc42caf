import Foundation
import SubreconCore
import SubreconPorts

/// A model, in Swift, of the rules the candidate query states in SQL (docs/CONTRACT.md "Which users a run asks
/// about"): what `InMemoryDatabase` selects with, and what tests predict a night's candidates with. The product asks
/// PostgreSQL alone (`CandidateQuery` returns each row's reasons); the database tests check this model against it.
public enum CandidateRulesModel {
    /// The three database rules `row` meets at `asOf`, in rule order.
    public static func rules(row: UserRow, asOf: Date, lookbackDays: Int) -> [CandidateReason] {
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

    /// The sweeps `row` falls in tonight (`sweep`, `sweep_free`).
    public static func sweeps(_ query: CandidateQuery, _ row: UserRow) -> [CandidateReason] {
        guard query.mode == .nightly else { return [] }
        var reasons: [CandidateReason] = []
        let sweepNight = CandidateQuery.sweepNight(asOf: query.asOf, days: query.sweepDays)
        if query.sweepDays > 0, row.currentTier > 0, CandidateQuery.sweepBucket(of: row.id, days: query.sweepDays) == sweepNight {
            reasons.append(.sweep)
        }
        let freeNight = CandidateQuery.sweepNight(asOf: query.asOf, days: query.sweepFreeDays)
        if query.sweepFreeDays > 0, row.currentTier <= 0,
            CandidateQuery.sweepFreeBucket(of: row.id, days: query.sweepFreeDays) == freeNight
        {
            reasons.append(.sweepFree)
        }
        return reasons
    }
}
