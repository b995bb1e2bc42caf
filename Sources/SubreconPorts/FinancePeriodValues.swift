import Foundation
import SubreconCore

// The finance period's read port (docs/CONTRACT.md, "subrecon finance"): what `subrecon finance` reads of the runs,
// their ledgers and `refunds_seen` over a period. Read only: nothing here writes.

/// One row of `reconcile_runs` as the finance period reads it.
public struct FinanceRun: Sendable, Hashable {
    public var id: String
    public var mode: CandidateQuery.Mode
    public var asOf: Date
    public var shard: ShardSpec
    public var dryRun: Bool
    public var status: RunStatus
    public var startedAt: Date
    public var finishedAt: Date?

    public init(
        id: String, mode: CandidateQuery.Mode, asOf: Date, shard: ShardSpec, dryRun: Bool, status: RunStatus, startedAt: Date,
        finishedAt: Date?
    ) {
        self.id = id
        self.mode = mode
        self.asOf = asOf
        self.shard = shard
        self.dryRun = dryRun
        self.status = status
        self.startedAt = startedAt
        self.finishedAt = finishedAt
    }

    /// A run whose changes count (docs/CONTRACT.md, "subrecon finance"): completed (also after a resume) and not a dry run.
    public var counts: Bool { status == .completed && !dryRun }
}

/// One ledger entry of a run, read for the finance period: the verdict and what applying it did.
public struct FinanceLedgerEntry: Sendable, Hashable {
    public var runID: String
    public var seq: Int64
    public var verdict: Verdict
    public var outcome: LedgerOutcome?

    public init(runID: String, seq: Int64, verdict: Verdict, outcome: LedgerOutcome?) {
        self.runID = runID
        self.seq = seq
        self.verdict = verdict
        self.outcome = outcome
    }
}

/// One row of `refunds_seen`: a refund kept once per store transaction, with the user and the run that first kept it.
public struct FinanceRefundRow: Sendable, Hashable {
    public var userID: String
    public var runID: String
    public var refund: SeenRefund

    public init(userID: String, runID: String, refund: SeenRefund) {
        self.userID = userID
        self.runID = runID
        self.refund = refund
    }
}

/// What `subrecon finance` reads (docs/CONTRACT.md, "subrecon finance"), set-based and paged so a year of nights streams.
public protocol FinancePeriodSource: Sendable {
    /// Every run whose `as_of` is in `[from, to)`, any mode, shard, status or dry run, in `(as_of, id)` order.
    func financeRuns(from: Date, to: Date) async throws -> [FinanceRun]
    /// The entries of run `runID` that changed a row (outcome `applied`, action `downgrade`, `restore` or `extend`), in
    /// seq order, the first `limit` after `afterSeq`.
    func financeChanges(runID: String, afterSeq: Int64, limit: Int) async throws -> [FinanceLedgerEntry]
    /// The entries of run `runID` whose truth is an entitled billing issue (revenue at risk, grace), in seq order, the
    /// first `limit` after `afterSeq`.
    func financeStocks(runID: String, afterSeq: Int64, limit: Int) async throws -> [FinanceLedgerEntry]
    /// The refunds of `refunds_seen` dated in `[from, to)`, in `(store, transaction_id)` order, the first `limit` after
    /// `after` (a store and transaction id).
    func financeRefunds(from: Date, to: Date, after: (store: String, transactionID: String)?, limit: Int) async throws
        -> [FinanceRefundRow]
}
