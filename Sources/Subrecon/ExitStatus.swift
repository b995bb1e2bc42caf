/// The exit codes of SPEC 5.8 (64–78 follow sysexits.h).
public enum ExitStatus: Int32, Sendable, CaseIterable {
    case ok = 0
    case userErrors = 1
    case valveTripped = 3
    case shardLocked = 4
    case usage = 64
    case unavailable = 69
    case stopped = 75
    case config = 78

    public var meaning: String {
        switch self {
        case .ok: "all candidates processed"
        case .userErrors: "finished, but some users errored (they are in the report, untouched)"
        case .valveTripped: "safety valve tripped, nothing applied"
        case .shardLocked: "another run holds this shard's lock; nothing done"
        case .usage: "command-line usage error"
        case .unavailable: "a dependency was unreachable at start, nothing done"
        case .stopped: "the run stopped before it finished (signal, lost database, lost shard lock); resume it with --resume RUN_ID"
        case .config: "configuration error, nothing touched"
        }
    }
}

/// An error that ends the command with a specific exit status and one operator-facing line.
public struct CommandFailure: Error, CustomStringConvertible, Sendable {
    public var status: ExitStatus
    public var description: String
    public init(_ status: ExitStatus, _ description: String) {
        self.status = status
        self.description = description
    }
}

extension ExitStatus {
    /// The one map from a failure to its exit status and operator line (SPEC 5.8), used by every command.
    ///
    /// Typed failures keep their status; configuration 78; a database unreachable at start 69 (`withStore` turns
    /// it into a `CommandFailure` before anything is touched); a stop (signal, lost lock, cancellation) 75; any
    /// other failure after start (the run folder or the run record could not be written, a database error mid-run)
    /// is the run stopping before it finished, 75 — never "some users errored" (1), which only a finished run says.
    public static func failure(_ error: any Error) -> (status: ExitStatus, line: String) {
        switch error {
        case let failure as CommandFailure: return (failure.status, failure.description)
        case let error as ConfigError: return (.config, error.description)
        case let stopped as RunStopped: return (.stopped, "stopped: \(stopped.reason)")
        case is CancellationError: return (.stopped, "stopped (interrupted)")
        default: return (.stopped, "stopped before finishing: \(error)")
        }
    }
}
