import Foundation
import SubreconCore

// The job's database ports (docs/ARCHITECTURE.md, "Ports"): small protocols the job owns, one per thing it needs
// from its database, passed to it explicitly. Production: PostgreSQL (`SubreconDatabase`, which depends on this
// module); tests: the in-memory kit.

/// The candidates of a run, in id order (CONTRACT "Which users a run asks about").
public protocol CandidateSource: Sendable {
    func countCandidates(_ query: CandidateQuery) async throws -> Int
    func candidatePage(_ query: CandidateQuery, after lastID: String?, limit: Int) async throws -> [UserRow]
    /// The rows of `ids` within `shard`, whatever their tier, status or dates, in id order: rows a step reads by name
    /// (a transfer's holders, CONTRACT "Whose purchase it is"), never by a candidate rule. An id no row has is absent.
    func rows(named ids: [String], shard: ShardSpec) async throws -> [UserRow]
    /// Of `ids`, those no `users` row has, in the order given (CONTRACT "Commands": `--users-file`).
    func unmatchedIDs(_ ids: [String]) async throws -> [String]
}

/// The product → tier mapping.
public protocol CatalogSource: Sendable {
    func loadCatalog() async throws -> ProductCatalog
}

/// The run's own record (`reconcile_runs`): started, resumed, finished, failed, and the selection `--resume` reuses.
public protocol RunJournal: Sendable {
    func startRun(_ record: RunRecord) async throws
    func finishRun(id: String, status: RunStatus, summary: Data, finishedAt: Date) async throws
    func setRunStatus(id: String, _ status: RunStatus) async throws
    func recordSelection(runID: String, selection: Data) async throws
    func storedRun(id: String) async throws -> StoredRun?
}

/// The run's verdicts and what applying them did (`reconcile_verdicts`), and the write of a verdict itself.
public protocol VerdictRecords: Sendable {
    /// Appends verdicts at their scan positions (`seqs`) and records `progress`, atomically; a user already in the
    /// run's ledger keeps its first verdict.
    func appendVerdicts(runID: String, _ verdicts: [Verdict], seqs: [Int64], progress: RunProgress) async throws
    func ledgerTail(runID: String, afterUser: String?) async throws -> LedgerTail
    /// The ledger in seq order, `limit` entries after `afterSeq`, each verdict read back with its outcome and queued
    /// intents.
    func ledgerPage(runID: String, afterSeq: Int64, limit: Int) async throws -> [LedgerEntry]
    /// The refunds the ledger's verdicts carry (`Verdict.refunds`), in seq order: the first `limit` entries after
    /// `afterSeq` that carry any, read without the rest of their verdicts.
    func ledgerRefunds(runID: String, afterSeq: Int64, limit: Int) async throws -> [LedgerRefunds]
    /// Applies verdicts; one compare-and-set per row, each atomic with its audit row, intents and (with `ledger`)
    /// its outcome in the run's ledger.
    func applyDetailed(_ verdicts: [Verdict], runID: String, ledger: Bool) async throws -> [AppliedVerdict]
    /// The line transfers the run's verdicts name (`Verdict.transfers`).
    func ledgerTransfers(runID: String) async throws -> [LineTransfer]
    /// Replaces each user's verdict not yet applied in the run's ledger, or appends it after the last when the user
    /// has none; a verdict already applied is kept.
    func replaceVerdicts(runID: String, _ verdicts: [Verdict]) async throws
    func markUnchanged(runID: String, seqs: [Int64]) async throws
}

/// Past runs with their stored summaries (the HTML chart, the last-success metric).
public protocol RunHistory: Sendable {
    func recentRunSummaries(shard: ShardSpec?, limit: Int) async throws -> [RunHistoryEntry]
}

/// Users named by store feeds, kept per run so the keyset scan unions them with the CONTRACT "Which users a run asks about" rules
/// (`reconcile_run_candidates`), and the default start of the feeds' window.
public protocol FeedCandidates: Sendable {
    /// With `freeOnly`, only rows holding no tier (an inventory's live purchases: CONTRACT "Which users a run asks about").
    func addFeedCandidates(
        runID: String, column: FeedColumn, identifiers: [String], reason: CandidateReason, freeOnly: Bool
    ) async throws -> FeedMatch
    /// The users a feed names, read only (a dry run writes nothing).
    func feedUsers(column: FeedColumn, identifiers: [String], freeOnly: Bool) async throws -> (users: [String], unmatched: Int)
    /// The users whose `column` holds each identifier (read only): whom a feed's refunds belong to.
    func feedUserIDs(column: FeedColumn, identifiers: [String]) async throws -> [String: [String]]
    func lastCompletedNightlyStart(shard: ShardSpec) async throws -> Date?
    /// This shard's recorded attempts at a feed (CONTRACT "Hostile answers and bounded work", `FeedWindowRule`); nil when never attempted.
    func feedAttempts(feed: String, shard: ShardSpec, asOf: Date, days: Double) async throws -> [FeedAttempt]?
    /// Records the window a run starts reading a feed over: not covered until `completeFeedWindow`.
    func beginFeedWindow(runID: String, feed: String, shard: ShardSpec, since: Date, until: Date) async throws
    /// Marks a run's window of a feed as read to its end.
    func completeFeedWindow(runID: String, feed: String) async throws
    /// Records tonight's sweep share (CONTRACT "Which users a run asks about") as candidates of `runID`; idempotent.
    func recordSweep(_ query: CandidateQuery, runID: String) async throws
}

/// Linking and orphans (CONTRACT "Whose purchase it is"): whose account a store named, the links a run made, the orphans kept across nights.
public protocol PurchaseLinks: Sendable {
    /// The users whose `id`, or optional `account_token`, is each account (an Apple `appAccountToken` compared
    /// case-insensitively); an account more than one row claims maps to all of them.
    func owners(ofAccounts accounts: [BuyerAccount]) async throws -> [BuyerAccount: [String]]
    /// The users among `identifiers` of `column` that a row holds (read only): which purchases are unlinked.
    func heldIdentifiers(column: FeedColumn, identifiers: [String]) async throws -> Set<String>
    /// Records tonight's links as candidates of `runID` (reason `linked_purchase`); idempotent.
    func addLinks(runID: String, _ links: [PurchaseLink]) async throws
    /// The links recorded for `runID`, by user and source.
    func links(runID: String) async throws -> [String: [FactOrigin: String]]
    /// Keeps tonight's orphans (first and last night seen, by store and identifier) and returns them as kept.
    func recordOrphans(runID: String, night: Date, _ orphans: [Orphan]) async throws -> [Orphan]
    /// The orphans run `runID` kept: a resumed run lists them again without reading the feeds.
    func orphans(runID: String) async throws -> [Orphan]
}

/// Everything the job asks of its database, as one value; each phase takes only the port it needs.
public typealias ReconcileDatabase = CandidateSource & CatalogSource & RunJournal & VerdictRecords & RunHistory & FeedCandidates

/// Every database port, as one database serves them in production.
public typealias DatabasePorts = ReconcileDatabase & RefundRecords & PurchaseLinks & RunReportRecords

/// The refunds seen across runs (`refunds_seen`, CONTRACT "Finance figures"), once per store transaction.
public protocol RefundRecords: Sendable {
    /// Keeps each refund once per store transaction; returns how many were new.
    func recordRefunds(runID: String, _ refunds: [(userID: String, refund: SeenRefund)]) async throws -> Int
    /// The refunds `runID` was the first to keep, by user: what a resumed run's rows carry again (`UserRow.feedRefunds`).
    func feedRefunds(runID: String) async throws -> [String: [SeenRefund]]
    /// Users with at least `minimumRefunds` refunds dated in `(asOf - days, asOf]`, by user id.
    func refundReview(asOf: Date, days: Int, minimumRefunds: Int) async throws -> [RefundReviewEntry]
}

/// Keeps, with a run, the report inputs later nights move (the database adapter's `recordRunReports`).
public protocol RunReportRecords: Sendable {
    func recordRunReports(runID: String, _ files: [String: String]) async throws
}
