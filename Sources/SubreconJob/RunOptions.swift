import Foundation
import Logging
import SubreconCore
import SubreconDatabase
import SubreconReports

/// Options of one `subrecon run`.
public struct RunOptions: Sendable {
    public var asOf: Date
    public var dryRun = false
    public var mode: CandidateQuery.Mode = .nightly
    public var userIDs: [String]?
    public var endAfter: Date?
    public var endBefore: Date?
    public var concurrency = 16
    public var limit: Int?
    public var shard: ShardSpec = .all
    public var reportDirectory: URL
    public var maxDowngradeRatio = 0.5
    /// Refund review (CONTRACT "Finance figures"): a user with at least this many refunds seen within `refundReviewDays` days is
    /// listed in `refund_review.csv` (`--refund-review-count`, `--refund-review-days`).
    public var refundReviewCount = 3
    public var refundReviewDays = 365
    public var lookbackDays = 60
    /// The rolling sweep's period in nights (`--sweep-days`, CONTRACT "Which users a run asks about"): every tier holder is re-validated at least
    /// once every D nights; 0 = off.
    public var sweepDays = 30
    /// The free-row sweep's period in nights (`--sweep-free-days`, CONTRACT "Which users a run asks about", "Whose purchase it is"): every row holding no tier is
    /// re-validated at least once every D nights; 0 = off. The command's default is 90; a job built without the
    /// command (tests, the bench) sweeps no free rows unless it says so.
    public var sweepFreeDays = 0
    /// Start of every store feed's window (`--feeds-since`); nil = per feed, the earliest instant this shard has not
    /// covered (`FeedWindowRule`: at most 30 days back; a feed never read: the last completed nightly run, at most 7 days back, else 3 days).
    public var feedsSince: Date?
    /// The run whose recorded candidates (feeds, sweep) join the scan (set by the job once they are recorded).
    var runCandidatesID: String?
    /// A dry run's feed-named users (kept in memory: a dry run writes nothing).
    var namedUserIDs: [String]?
    public var environment: StoreEnvironment = .production
    public var pageSize = 500
    /// RevenueCat requests per second for the whole app (every shard together; a `--shard I/N` run takes 1/N), shared
    /// by all workers; 0 = unlimited. RevenueCat does not document v1 limits (v2 allows 480/min = 8/s per project);
    /// 10/s is a cautious default for one nightly job.
    public var revenueCatRequestsPerSecond = RunOptions.defaultRevenueCatRequestsPerSecond
    public static let defaultRevenueCatRequestsPerSecond = 10.0
    /// Each store's requests per second for the whole app (every shard together; a `--shard I/N` run takes 1/N),
    /// shared by all workers, by origin (`--<store>-rps`); 0 = unlimited; a store absent here runs at the default
    /// its adapter declares.
    public var requestsPerSecond: [FactOrigin: Double] = [:]
    public var applyBatchSize = 50
    /// Verdicts written to the ledger per round trip (and the granularity of resume).
    public var ledgerBatchSize = 200
    /// Apply even if the safety valve trips (`--accept-downgrades RUN_ID`, after an operator reviewed the run).
    public var acceptDowngrades = false
    /// Apply the truth of an `asOf` far from now (`--apply-past`: deliberate replays and tests; CONTRACT "Exit codes").
    public var applyPast = false
    /// Time a user gets for all its requests together; past it the user is `fetch_error` tonight.
    public var userDeadline: Duration = RunOptions.defaultUserDeadline
    public static let defaultUserDeadline: Duration = .seconds(120)
    /// Time `explain` and the store feeds get (see `LookupDeadline`): their own deadlines.
    public var feedDeadline: Duration = RunOptions.defaultFeedDeadline
    public static let defaultFeedDeadline: Duration = .seconds(300)
    public static let defaultExplainDeadline: Duration = .seconds(120)
    /// The monotonic clock a source's health is judged on (a source answering only failures for a minute is
    /// declared down, `SourceHealthBoard`); injected by tests to make a minute pass quickly.
    public var healthClock: @Sendable () -> ContinuousClock.Instant = { .now }
    /// How far the scan may run ahead of its oldest user still in flight (bounds what a resume must skip).
    public var reorderWindow = 10_000
    /// Asks the run to stop cleanly (signals, a lost shard lock): validated verdicts are kept, exit 75.
    public var stop: StopSignal?

    public init(asOf: Date, reportDirectory: URL) {
        self.asOf = asOf
        self.reportDirectory = reportDirectory
    }

    /// Why `row` is a candidate of this run (CONTRACT "Reports" `candidate_reason`); `feeds` are the feed reasons by user.
    func candidateReasons(for row: UserRow, feeds: [String: [CandidateReason]] = [:]) -> [CandidateReason] {
        var reasons: [CandidateReason] =
            switch mode {
            case .nightly: CandidateReason.nightlyRules(row: row, asOf: asOf, lookbackDays: lookbackDays)
            case .backfill: [.backfill]
            }
        if mode == .nightly {
            reasons += feeds[row.id] ?? []
            if sweepDays > 0, row.currentTier > 0,
                CandidateQuery.sweepBucket(of: row.id, days: sweepDays) == CandidateQuery.sweepNight(asOf: asOf, days: sweepDays)
            {
                reasons.append(.sweep)
            }
            if sweepFreeDays > 0, row.currentTier <= 0,
                CandidateQuery.sweepFreeBucket(of: row.id, days: sweepFreeDays)
                    == CandidateQuery.sweepNight(asOf: asOf, days: sweepFreeDays)
            {
                reasons.append(.sweepFree)
            }
        }
        if userIDs != nil { reasons.append(.usersFile) }
        return Array(Set(reasons)).sorted()
    }

    /// Whether this run reads the store feeds: nightly runs over the whole selection (not `--users-file`).
    var readsFeeds: Bool { mode == .nightly && userIDs == nil }

    var selection: CandidateQuery {
        CandidateQuery(
            mode: mode, asOf: asOf, lookbackDays: lookbackDays, userIDs: userIDs, endAfter: endAfter,
            endBefore: endBefore, shard: shard, sweepDays: mode == .nightly ? sweepDays : 0, runCandidatesID: runCandidatesID,
            namedUserIDs: namedUserIDs, sweepFreeDays: mode == .nightly ? sweepFreeDays : 0)
    }
}

/// Progress of a run, for a terminal line or a log line.
public struct ProgressSnapshot: Sendable {
    public var phase: String
    public var done: Int
    public var total: Int?
    public var errors: Int
    public var elapsed: Double
    public var rate: Double { elapsed > 0 ? Double(done) / elapsed : 0 }
    public var eta: Double? {
        guard let total, rate > 0, total >= done else { return nil }
        return Double(total - done) / rate
    }
}

/// What a run produced.
public struct RunResult: Sendable {
    public var summary: RunSummary
    public var folder: URL
    public var exitStatus: ExitStatus

    public init(summary: RunSummary, folder: URL, exitStatus: ExitStatus) {
        self.summary = summary
        self.folder = folder
        self.exitStatus = exitStatus
    }
}

/// A duration in (fractional) seconds, for reports and logs.
func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}
