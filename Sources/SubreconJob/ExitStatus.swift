import SubreconCore

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
    /// The one map from a failure to its exit status and operator line (CONTRACT "Exit codes"), used by every command.
    ///
    /// Typed failures keep their status; configuration 78; a database unreachable at start 69 (`withDatabase` turns
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
