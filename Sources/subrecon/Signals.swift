import Dispatch
import Foundation

/// SIGTERM / SIGINT cancel the job: in-flight requests end, what was validated is in the run's ledger, and the
/// run can be resumed (`--resume RUN_ID`); the command exits 75.
enum Signals {
    static func cancellingOnTermination<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) async throws -> T {
        let task = Task { try await body() }
        var sources: [any DispatchSourceSignal] = []
        for number in [SIGTERM, SIGINT] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { task.cancel() }
            source.resume()
            sources.append(source)
        }
        defer { sources.forEach { $0.cancel() } }
        return try await task.value
    }
}
