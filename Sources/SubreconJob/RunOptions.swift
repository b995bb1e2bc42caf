import Foundation
import Logging
import SubreconCore
import SubreconPorts
import SubreconReports

/// What the operator asked of one `subrecon run` (the command's options; `StoredSelection` keeps the part a
/// `--resume` must repeat), the job's tuning (`RunTuning`) and the run's stop signal. Every default is the command's
/// (`RunOptions.Default`, which the command's options read), so a job built without the command (tests, the bench,
/// the demo) runs as `subrecon run` does unless it says otherwise.
///
/// What the run derives (the store feeds' candidates and links, the run whose recorded candidates join the scan) is
/// not written back here: `ReconcileJob` passes it to the phases (`CandidateQuery`, `FeedHarvest`).
public struct RunOptions: Sendable {
    /// The defaults of the command's options (docs/CONTRACT.md, `run`).
    public enum Default {
        public static let concurrency = 16
        public static let maxDowngradeRatio = 0.5
        public static let refundReviewCount = 3
        public static let refundReviewDays = 365
        public static let lookbackDays = 60
        public static let sweepDays = 30
        public static let sweepFreeDays = 90
        /// RevenueCat requests per second for the whole app (every shard together). RevenueCat does not document v1
        /// limits (v2 allows 480/min = 8/s per project); 10/s is a cautious default for one nightly job.
        public static let revenueCatRequestsPerSecond = 10.0
        /// RevenueCat API v2 requests per second for the whole app: its Customer Information domain allows 480 a
        /// minute per project.
        public static let revenueCatV2RequestsPerSecond = 8.0
        public static let userDeadline: Duration = .seconds(120)
        public static let feedDeadline: Duration = .seconds(300)
        public static let explainDeadline: Duration = .seconds(120)
    }

    public var asOf: Date
    public var dryRun = false
    public var mode: CandidateQuery.Mode = .nightly
    public var userIDs: [String]?
    public var endAfter: Date?
    public var endBefore: Date?
    public var concurrency = Default.concurrency
    public var limit: Int?
    public var shard: ShardSpec = .all
    public var reportDirectory: URL
    public var maxDowngradeRatio = Default.maxDowngradeRatio
    /// Refund review (CONTRACT "Finance figures"): a user with at least this many refunds seen within `refundReviewDays` days is
    /// listed in `refund_review.csv` (`--refund-review-count`, `--refund-review-days`).
    public var refundReviewCount = Default.refundReviewCount
    public var refundReviewDays = Default.refundReviewDays
    public var lookbackDays = Default.lookbackDays
    /// The rolling sweep's period in nights (`--sweep-days`, CONTRACT "Which users a run asks about"): every tier holder is re-validated at least
    /// once every D nights; 0 = off.
    public var sweepDays = Default.sweepDays
    /// The free-row sweep's period in nights (`--sweep-free-days`, CONTRACT "Which users a run asks about", "Whose purchase it is"): every row
    /// holding no tier is re-validated at least once every D nights; 0 = off.
    public var sweepFreeDays = Default.sweepFreeDays
    /// Start of every store feed's window (`--feeds-since`); nil = per feed, the earliest instant this shard has not
    /// covered (`FeedWindowRule`: at most 30 days back; a feed never read: the last completed nightly run, at most 7 days back, else 3 days).
    public var feedsSince: Date?
    public var environment: StoreEnvironment = .production
    /// RevenueCat requests per second for the whole app (every shard together; a `--shard I/N` run takes 1/N), shared
    /// by all workers; 0 = unlimited.
    public var revenueCatRequestsPerSecond = Default.revenueCatRequestsPerSecond
    /// RevenueCat API v2's own budget (`--revenuecat-v2-rps`), shared and split across shards like the others.
    public var revenueCatV2RequestsPerSecond = Default.revenueCatV2RequestsPerSecond
    /// Each store's requests per second for the whole app (every shard together; a `--shard I/N` run takes 1/N),
    /// shared by all workers, by origin (`--<store>-rps`); 0 = unlimited; a store absent here runs at the default
    /// its adapter declares.
    public var requestsPerSecond: [FactOrigin: Double] = [:]
    /// Apply even if the safety valve trips (`--accept-downgrades RUN_ID`, after an operator reviewed the run).
    public var acceptDowngrades = false
    /// Apply the truth of an `asOf` far from now (`--apply-past`: deliberate replays and tests; CONTRACT "Exit codes").
    public var applyPast = false
    /// Time a user gets for all its requests together (`--user-timeout`); past it the user is `fetch_error` tonight.
    public var userDeadline: Duration = Default.userDeadline
    /// Time each store feed's read gets (`--feed-timeout`, see `LookupDeadline`).
    public var feedDeadline: Duration = Default.feedDeadline
    /// The job's tuning: no command option sets it.
    public var tuning = RunTuning()
    /// Asks the run to stop cleanly (signals, a lost shard lock): validated verdicts are kept, exit 75.
    public var stop: StopSignal?

    public init(asOf: Date, reportDirectory: URL) {
        self.asOf = asOf
        self.reportDirectory = reportDirectory
    }

    /// Whether this run reads the store feeds: nightly runs over the whole selection (not `--users-file`).
    var readsFeeds: Bool { mode == .nightly && userIDs == nil }

    /// The candidate selection this run asked for; with what the feeds gave it (`recordedAs`: the run whose recorded
    /// candidates join the scan; `named`: a dry run's feed users, kept in memory), the one the phases scan.
    func selection(recordedAs runCandidatesID: String? = nil, named: [String: [CandidateReason]]? = nil) -> CandidateQuery {
        CandidateQuery(
            mode: mode, asOf: asOf, lookbackDays: lookbackDays, userIDs: userIDs, endAfter: endAfter,
            endBefore: endBefore, shard: shard, sweepDays: mode == .nightly ? sweepDays : 0, runCandidatesID: runCandidatesID,
            namedUsers: named, sweepFreeDays: mode == .nightly ? sweepFreeDays : 0)
    }
}

/// The job's tuning: sizes and clocks no command option sets, each with its default here. Tests and the bench change
/// them to make a case small or quick.
public struct RunTuning: Sendable {
    /// Candidates read per page of the scan.
    public var pageSize = 500
    /// Verdicts applied (and report rows rendered) per round trip.
    public var applyBatchSize = 50
    /// Verdicts written to the ledger per round trip (and the granularity of resume).
    public var ledgerBatchSize = 200
    /// How far the scan may run ahead of its oldest user still in flight (bounds what a resume must skip).
    public var reorderWindow = 10_000
    /// The monotonic clock a source's health is judged on (a source answering only failures for a minute is
    /// declared down, `SourceHealthBoard`); injected by tests to make a minute pass quickly.
    public var healthClock: @Sendable () -> ContinuousClock.Instant = { .now }

    public init() {}
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
