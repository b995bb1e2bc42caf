import Foundation
import SubreconCore

// The values the job's run, ledger and history ports speak (docs/ARCHITECTURE.md, "Ports"): the job owns them; the
// database adapter stores them.

/// One row of `reconcile_runs`.
public struct RunRecord: Sendable, Hashable {
    public var id: String
    public var mode: CandidateQuery.Mode
    public var asOf: Date
    public var shard: ShardSpec
    public var dryRun: Bool
    public var status: RunStatus
    public var startedAt: Date
    public var finishedAt: Date?
    /// Counts per action / drift kind / outcome, as the job chooses to name them.
    public var counts: [String: Int]
    /// The run's options (never secrets), for the audit trail.
    public var options: [String: String]

    public init(
        id: String, mode: CandidateQuery.Mode, asOf: Date, shard: ShardSpec = .all, dryRun: Bool = false,
        status: RunStatus = .running, startedAt: Date, finishedAt: Date? = nil, counts: [String: Int] = [:],
        options: [String: String] = [:]
    ) {
        self.id = id
        self.mode = mode
        self.asOf = asOf
        self.shard = shard
        self.dryRun = dryRun
        self.status = status
        self.startedAt = startedAt
        self.finishedAt = finishedAt
        self.counts = counts
        self.options = options
    }
}

/// How far a run got: the validated prefix of its candidates (in scan order) and the valve's counters.
/// Stored in `reconcile_runs` together with each batch of verdicts, so a killed run resumes where it stopped.
public struct RunProgress: Sendable, Hashable {
    /// Verdicts in the ledger (their seqs are scan positions, possibly with gaps).
    public var validated: Int64 = 0
    /// The scan resumes after this id: every candidate up to it has its verdict in the ledger (some after it may too).
    public var scanCursor: String?
    /// True once every candidate has a verdict.
    public var scanDone = false
    public var heldTier = 0
    public var wouldLoseTier = 0
    public var userErrors = 0
    public init() {}
}

/// The part of a stopped run's ledger past its resume point.
public struct LedgerTail: Sendable, Hashable {
    public var userIDs: Set<String>
    public var nextSeq: Int64
    public init(userIDs: Set<String>, nextSeq: Int64) {
        self.userIDs = userIDs
        self.nextSeq = nextSeq
    }
}

/// One verdict of a run and what applying it did (nil: not applied yet, or never: dry run, valve).
public struct LedgerEntry: Sendable, Hashable {
    public var seq: Int64
    public var verdict: Verdict
    /// nil until the apply phase decided it.
    public var outcome: LedgerOutcome?
    public var queuedIntents: [PushIntent]

    public init(seq: Int64, verdict: Verdict, outcome: LedgerOutcome?, queuedIntents: [PushIntent]) {
        self.seq = seq
        self.verdict = verdict
        self.outcome = outcome
        self.queuedIntents = queuedIntents
    }
}

/// The refunds one ledger entry's verdict carries (`Verdict.refunds`), read without the rest of the verdict.
public struct LedgerRefunds: Sendable, Hashable {
    public var seq: Int64
    public var userID: String
    public var refunds: [SeenRefund]

    public init(seq: Int64, userID: String, refunds: [SeenRefund]) {
        self.seq = seq
        self.userID = userID
        self.refunds = refunds
    }

    /// The refunds of a whole ledger entry; nil when its verdict carries none (no list, or an empty one).
    public init?(_ entry: LedgerEntry) {
        guard let refunds = entry.verdict.refunds, !refunds.isEmpty else { return nil }
        self.init(seq: entry.seq, userID: entry.verdict.row.id, refunds: refunds)
    }
}

/// A stored run: its record, the candidate selection it used (JSON) and its progress.
public struct StoredRun: Sendable {
    public var record: RunRecord
    public var selection: Data?
    public var progress: RunProgress
    /// The summary JSON `finishRun(summary:)` stored, if the run finished.
    public var summary: Data?

    public init(record: RunRecord, selection: Data?, progress: RunProgress, summary: Data? = nil) {
        self.record = record
        self.selection = selection
        self.progress = progress
        self.summary = summary
    }
}

/// What happened when a verdict was applied.
public enum ApplyOutcome: Sendable, Hashable {
    /// The row, its audit row and its intents were written; `intentsDeduplicated` intents were already queued.
    case applied(intentsQueued: Int, intentsDeduplicated: Int)
    /// The row's `updated_at` changed since it was read (a webhook wrote in between): nothing was written.
    case concurrentUpdate
    /// The user's row no longer exists: nothing was written.
    case notFound
    /// The verdict does not change the row (`changesRow` is false): nothing was written.
    case unchanged
    /// The update touched nothing although the row still reads as it was read, with row-level security that may refuse
    /// rows active for the job's role and no other writer holding the row: a policy refused it (docs/CONTRACT.md,
    /// "Applying"). Nothing was written.
    case refusedByPolicy
    /// Writing the row failed for lack of a privilege (SQLSTATE 42501; `reason` names it). Nothing was written.
    case permissionDenied(reason: String)
}

/// An applied verdict with the intents that were queued now and those an earlier write had already queued.
public struct AppliedVerdict: Sendable, Hashable {
    public var outcome: ApplyOutcome
    public var queuedIntents: [PushIntent]
    public var deduplicatedIntents: [PushIntent]

    public init(outcome: ApplyOutcome, queuedIntents: [PushIntent], deduplicatedIntents: [PushIntent]) {
        self.outcome = outcome
        self.queuedIntents = queuedIntents
        self.deduplicatedIntents = deduplicatedIntents
    }
}

/// One finished or running row of `reconcile_runs` with its `counts` JSON as stored (the run summary when the
/// job finished it with `finishRun(id:status:summary:finishedAt:)`).
public struct RunHistoryEntry: Sendable, Hashable {
    public var id: String
    public var status: RunStatus
    public var startedAt: Date
    public var finishedAt: Date?
    public var countsJSON: Data

    public init(id: String, status: RunStatus, startedAt: Date, finishedAt: Date?, countsJSON: Data) {
        self.id = id
        self.status = status
        self.startedAt = startedAt
        self.finishedAt = finishedAt
        self.countsJSON = countsJSON
    }
}

extension ApplyOutcome {
    /// The outcome as the run's ledger keeps it (`reconcile_verdicts.outcome`).
    public var ledgerOutcome: LedgerOutcome {
        switch self {
        case .applied: .applied
        case .concurrentUpdate: .concurrentUpdate
        case .notFound: .notFound
        case .unchanged: .unchanged
        case .refusedByPolicy: .refusedByPolicy
        case .permissionDenied: .permissionDenied
        }
    }
}
