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
        case .stopped: "the run stopped before it finished (signal, lost database); resume it with --resume RUN_ID"
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
