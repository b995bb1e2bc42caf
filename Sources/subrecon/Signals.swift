import Dispatch
import Foundation
import Subrecon
import Synchronization

/// SIGTERM / SIGINT stop the job cleanly: the first signal asks `stop` to end the run (in-flight lookups are
/// dropped, the verdicts already validated are written to the run's ledger, the command exits 75 and
/// `--resume RUN_ID` asks only the rest). Whatever happens next, the process does not outlive the signal by much:
/// a second signal, or `cancelAfter` without an end, cancels the job's task; `exitAfter` the process exits 75.
enum Signals {
    static func stoppingOnTermination<T: Sendable>(
        _ stop: StopSignal, cancelAfter: Double = 5, exitAfter: Double = 10,
        _ body: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        let task = Task { try await body() }
        let received = SignalCount()
        var sources: [any DispatchSourceSignal] = []
        for number in [SIGTERM, SIGINT] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            let name = number == SIGTERM ? "SIGTERM" : "SIGINT"
            source.setEventHandler {
                let count = received.increment()
                if count == 1 {
                    stop.stop(reason: "\(name) received")
                    DispatchQueue.global().asyncAfter(deadline: .now() + cancelAfter) { task.cancel() }
                    DispatchQueue.global().asyncAfter(deadline: .now() + exitAfter) { hardExit(name) }
                } else {
                    task.cancel()
                    DispatchQueue.global().asyncAfter(deadline: .now() + 2) { hardExit(name) }
                }
            }
            source.resume()
            sources.append(source)
        }
        defer { sources.forEach { $0.cancel() } }
        return try await task.value
    }

    private static func hardExit(_ name: String) {
        FileHandle.standardError.write(
            Data("subrecon: stopped by \(name) before the run could end cleanly; resume it with --resume RUN_ID\n".utf8))
        exit(ExitStatus.stopped.rawValue)
    }
}

/// Signals received so far (handlers run on a global queue, possibly at once for two signals).
private final class SignalCount: Sendable {
    private let value = Mutex(0)
    func increment() -> Int {
        value.withLock { count in
            count += 1
            return count
        }
    }
}
