import Foundation
import SubreconCore
import SubreconReports

/// A failure of an adapter (the database's) that states its own exit status and operator line: the adapter's errors
/// are mapped where the adapters are wired, at the composition root (docs/CONTRACT.md, "Exit codes"); the job knows
/// no adapter's error type.
public protocol ExitMappedFailure: Error {
    var exit: (status: ExitStatus, line: String) { get }
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
    /// The one map from a failure to its exit status and operator line (CONTRACT "Exit codes"), used by every command.
    ///
    /// Typed failures keep their status; configuration 78, and so are a schema the binary cannot use and a report
    /// folder that cannot be written; a database failure 69 (unreachable, refused, an error it answered: nothing
    /// done). Exit 75 is only for a run that was recorded and can be resumed: `RunLifecycle.fail` says it, as a
    /// `CommandFailure`; nothing else does. Any other failure is 69, sysexits.h's catch-all ("something you wanted to
    /// do doesn't work"), never 75 — never "some users errored" (1) either, which only a finished run says.
    public static func failure(_ error: any Error) -> (status: ExitStatus, line: String) {
        switch error {
        case let failure as CommandFailure: return (failure.status, failure.description)
        case let error as ConfigError: return (.config, error.description)
        case let mapped as any ExitMappedFailure: return mapped.exit
        case let error as ReportError: return (.config, error.description)
        case let stopped as RunStopped: return (.unavailable, "stopped before anything was recorded: \(stopped.reason)")
        case is CancellationError: return (.unavailable, "stopped before anything was recorded (interrupted)")
        default: return (.unavailable, "failed before finishing: \(error)")
        }
    }
}
