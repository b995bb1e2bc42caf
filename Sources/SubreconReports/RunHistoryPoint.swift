import Foundation
import SubreconCore

/// One past run as the HTML summary charts it: its billing-issue revenue at risk per currency.
/// Built from the summary JSON stored in `reconcile_runs.counts`; reads only the fields it needs, so older or
/// newer summaries still chart.
public struct RunHistoryPoint: Sendable, Hashable {
    public var runID: String
    public var startedAt: Date
    public var status: RunStatus
    /// Sum of `billing_issue_at_risk.value` over stores, per currency (`unknown` holds only counts, value 0).
    public var atRisk: [String: Decimal]
    /// Users in billing issue, all currencies.
    public var atRiskUsers: Int

    public init(runID: String, startedAt: Date, status: RunStatus, atRisk: [String: Decimal], atRiskUsers: Int) {
        self.runID = runID
        self.startedAt = startedAt
        self.status = status
        self.atRisk = atRisk
        self.atRiskUsers = atRiskUsers
    }

    /// The point of a run summary.
    public init(summary: RunSummary) {
        var atRisk: [String: Decimal] = [:]
        var users = 0
        for bucket in summary.finance.revenueBuckets {
            atRisk[bucket.currency, default: 0] += bucket.billingIssueAtRisk.value
            users += bucket.billingIssueAtRisk.count
        }
        self.init(
            runID: summary.runID, startedAt: ISO8601.date(summary.startedAt) ?? Date(timeIntervalSince1970: 0),
            status: summary.status, atRisk: atRisk, atRiskUsers: users)
    }

    private struct Stored: Decodable {
        struct Finance: Decodable { var buckets: [String: FinanceFigures.Bucket]? }
        var finance: Finance?
        var status: String?
    }

    /// The point of a stored run; nil when `json` is not a summary (e.g. a run that never finished).
    public init?(runID: String, startedAt: Date, status: RunStatus, summaryJSON json: Data) {
        guard let stored = try? JSONDecoder().decode(Stored.self, from: json), let buckets = stored.finance?.buckets else {
            return nil
        }
        var atRisk: [String: Decimal] = [:]
        var users = 0
        for bucket in buckets.values where bucket.group == .revenue {
            atRisk[bucket.currency, default: 0] += bucket.billingIssueAtRisk.value
            users += bucket.billingIssueAtRisk.count
        }
        self.init(
            runID: runID, startedAt: startedAt, status: stored.status.flatMap(RunStatus.init(rawValue:)) ?? status, atRisk: atRisk,
            atRiskUsers: users)
    }

    /// `history` without `current`'s run, plus `current`, oldest first, the last `limit` of them.
    public static func merged(_ history: [RunHistoryPoint], current: RunHistoryPoint, limit: Int = 30) -> [RunHistoryPoint] {
        let all = history.filter { $0.runID != current.runID } + [current]
        return Array(all.sorted { ($0.startedAt, $0.runID) < ($1.startedAt, $1.runID) }.suffix(limit))
    }
}
