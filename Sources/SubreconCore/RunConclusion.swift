/// The exit codes of CONTRACT "Exit codes" (64–78 follow sysexits.h).
public enum ExitStatus: Int32, Sendable, CaseIterable, Codable {
    case ok = 0
    case userErrors = 1
    /// `finance`: the period has gaps (a shard's night missing, failed or unfinished); the figures cover the rest.
    case periodGaps = 5
    case valveTripped = 3
    case shardLocked = 4
    case usage = 64
    /// `explain`: the user has no row; `run`: none of `--users-file`'s ids has one (`EX_NOINPUT`).
    case noInput = 66
    case unavailable = 69
    case stopped = 75
    case config = 78
    /// Stopped by SIGINT with no recorded run to resume (a dry run, or one stopped before it was recorded): 128 + 2, as
    /// a shell reports a process SIGINT ended.
    case interrupted = 130
    /// Stopped by SIGTERM with no recorded run to resume: 128 + 15.
    case terminated = 143

    public var meaning: String {
        switch self {
        case .ok: "all candidates processed"
        case .userErrors: "finished, but some users errored (they are in the report, untouched)"
        case .periodGaps: "finance: the period has gaps (a shard's night missing, failed or unfinished), listed in every output"
        case .valveTripped: "safety valve tripped, nothing applied"
        case .shardLocked: "another run holds this shard's lock; nothing done"
        case .usage: "command-line usage error"
        case .noInput:
            "no input: the user has no row (explain), none of --users-file's ids has one (run), the run's ledger misses verdicts (report)"
        case .unavailable: "a dependency was unreachable at start, nothing done"
        case .stopped: "the run stopped before it finished (signal, lost database, lost shard lock); resume it with --resume RUN_ID"
        case .config: "configuration error, nothing touched"
        case .interrupted: "stopped by SIGINT with no recorded run to resume (a dry run, or stopped before it was recorded); start it again"
        case .terminated: "stopped by SIGTERM with no recorded run to resume (a dry run, or stopped before it was recorded); start it again"
        }
    }
}

/// The safety valve of CONTRACT "Applying" as a value: how many candidates holding a tier would lose it, against the threshold.
public struct SafetyValve: Sendable, Hashable, Codable {
    public var threshold: Double
    public var heldTier: Int
    public var wouldLoseTier: Int
    public var ratio: Double
    public var tripped: Bool

    public init(threshold: Double, heldTier: Int, wouldLoseTier: Int) {
        self.threshold = threshold
        self.heldTier = heldTier
        self.wouldLoseTier = wouldLoseTier
        self.ratio = heldTier == 0 ? 0 : Double(wouldLoseTier) / Double(heldTier)
        self.tripped = ratio > threshold
    }

    /// Whether the run may apply its verdicts: the valve held, or an operator accepted the downgrades after review.
    public func allowsApply(acceptingDowngrades: Bool) -> Bool { !tripped || acceptingDowngrades }

    enum CodingKeys: String, CodingKey {
        case threshold
        case heldTier = "held_tier"
        case wouldLoseTier = "would_lose_tier"
        case ratio, tripped
    }
}

/// How a run stands or ended: one type from the database (`reconcile_runs.status`) to the summary (`summary.json`
/// `status`), the terminal, the Markdown and the metrics (CONTRACT "Reports", "Exit codes").
public enum RunStatus: String, Sendable, Hashable, Codable, CaseIterable {
    case running
    case completed
    /// Completed, with users (or feeds, or sources) in error: exit 1. `reconcile_runs` records it as `completed`.
    case completedWithErrors = "completed_with_errors"
    case valveTripped = "valve_tripped"
    case failed

    /// How a run that reached its end ended, from the valve, the operator's acceptance and the users that errored
    /// (CONTRACT "Applying", "Exit codes").
    public static func concluding(valve: SafetyValve, acceptingDowngrades: Bool, userErrors: Int) -> RunStatus {
        if !valve.allowsApply(acceptingDowngrades: acceptingDowngrades) { return .valveTripped }
        return userErrors > 0 ? .completedWithErrors : .completed
    }

    /// The statuses a run can end with (`concluding`).
    public static let ends: [RunStatus] = [.completed, .completedWithErrors, .valveTripped]

    /// What `reconcile_runs.status` keeps: the run's lifecycle, where a run completed with errors is `completed`.
    public var recorded: RunStatus { self == .completedWithErrors ? .completed : self }

    /// The exit code of a run that ended so; a run `running` or `failed` stopped before its end (75, resumable).
    public var exitStatus: ExitStatus {
        switch self {
        case .completed: .ok
        case .completedWithErrors: .userErrors
        case .valveTripped: .valveTripped
        case .running, .failed: .stopped
        }
    }
}

/// What happened to one verdict when the run applied it, as kept in the run's ledger.
public enum LedgerOutcome: String, Sendable, Codable, CaseIterable {
    /// The row, its audit row and its intents were written.
    case applied
    /// The row changed since it was read, or another writer held it: nothing was written.
    case concurrentUpdate = "concurrent_update"
    /// The row no longer exists: nothing was written.
    case notFound = "not_found"
    /// Row-level security let the job's role read the row, unchanged, but its update touched nothing: refused by a
    /// policy, never a concurrent update. Nothing was written; the user is an error.
    case refusedByPolicy = "refused_by_policy"
    /// The write failed for lack of a privilege (SQLSTATE 42501): nothing was written; the user is an error.
    case permissionDenied = "permission_denied"
    /// The verdict does not change the row: nothing to write.
    case unchanged
}
