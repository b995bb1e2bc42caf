import Dispatch
import Foundation
import Subrecon
import SubreconCore
import Synchronization

/// SIGTERM / SIGINT stop the job cleanly: the first signal asks `stop` to end the run (in-flight lookups are
/// dropped, the verdicts already validated are written to the run's ledger, the command exits 75 and
/// `--resume RUN_ID` asks only the rest). Whatever happens next, the process does not outlive the signal by much:
/// a second signal, or `exitAfter` seconds without a clean end, exits 75 at once (what was not committed is
/// rolled back by PostgreSQL; `--resume` redoes it).
///
/// The job's task is never cancelled: cancelling it would also cancel the PostgreSQL pool's `run()`, whose forced
/// shutdown closes the connections under the job's last writes (the ledger flush, the run's status, the shard
/// lock's release) — which is how a stopped run used to log "run stopped" and then hang.
enum Signals {
    static func stoppingOnTermination<T: Sendable>(
        _ stop: StopSignal, exitAfter: Double = 10,
        _ body: () async throws -> T
    ) async throws -> T {
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
                    DispatchQueue.global().asyncAfter(deadline: .now() + exitAfter) { hardExit(name) }
                } else {
                    hardExit(name)
                }
            }
            source.resume()
            sources.append(source)
        }
        defer { for source in sources { source.cancel() } }
        return try await body()
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
