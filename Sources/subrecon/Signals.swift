import Foundation
import SubreconApp
import SubreconCore
import SubreconJob
import UnixSignals

/// SIGTERM / SIGINT stop the job cleanly: the first signal asks `stop` to end the run (in-flight lookups are
/// dropped, the verdicts already validated are written to the run's ledger, the command exits 75 and
/// `--resume` with its run id asks only the rest; a dry run, which nothing resumes, exits 130/143 instead). Whatever
/// happens next, the process does not outlive the signal by much: a second signal, or `exitAfter` without a clean
/// end, exits at once (75, or 130/143 with no recorded run) (what was not committed is rolled back by
/// PostgreSQL; `--resume` redoes it). A stop the run asked for itself (the shard lock's connection lost: the database
/// restarted or went away) gets `stopGrace` to end cleanly, then the same forced exit: a database that stays away
/// cannot hold the process (CONTRACT "What `run` checks first": every database wait has a deadline).
///
/// The signals come from swift-service-lifecycle's `UnixSignalsSequence`; the order of the shutdown is its
/// `ServiceGroup`'s (`Commands.withDatabase`: the job ends, then the PostgreSQL client is shut down). The job's
/// task is never cancelled: cancelling it would also cancel the client's `run()` under the job's last writes.
enum Signals {
    /// - Parameter beforeHardExit: runs before a forced exit (`run`: its metrics, with the exit status), for at most
    ///   `publishWithin`.
    static func stoppingOnTermination<T: Sendable>(
        _ stop: StopSignal, exitAfter: Duration = .seconds(10), stopGrace: Duration = .seconds(20),
        beforeHardExit: @escaping @Sendable (ExitStatus) async -> Void = { _ in }, publishWithin: Duration = .seconds(5),
        _ body: () async throws -> T
    ) async throws -> T {
        let signals = await UnixSignalsSequence(trapping: .sigterm, .sigint)
        let watcher = Task {
            var received = 0
            for await signal in signals {
                received += 1
                let cause = "stopped by \(signal)"
                guard received == 1 else { await hardExit(cause, stop, beforeHardExit, within: publishWithin) }
                stop.stop(reason: "\(signal) received", signalStatus: signal == .sigint ? .interrupted : .terminated)
                Task.detached {
                    try? await Task.sleep(for: exitAfter)
                    await hardExit(cause, stop, beforeHardExit, within: publishWithin)
                }
            }
        }
        // Any stop, whatever asked for it: the clean end gets `stopGrace`, then the process exits regardless (`hardExit`).
        let grace = Task {
            await stop.wait()
            guard !Task.isCancelled, let reason = stop.reason else { return }
            try? await Task.sleep(for: stopGrace)
            guard !Task.isCancelled else { return }
            await hardExit("stopped (\(reason))", stop, beforeHardExit, within: publishWithin)
        }
        defer {
            watcher.cancel()
            grace.cancel()
        }
        return try await body()
    }

    /// Says why and what to resume (the run `stop` knows is recorded, else that none was), gives `beforeExit` at most
    /// `within`, and exits: 75 when a recorded run can be resumed, else the signal's 130/143 (69 for a stop no signal
    /// asked for: the database or the shard lock lost) — exit 75 only for a run that can be resumed (CONTRACT "Exit
    /// codes").
    private static func hardExit(
        _ cause: String, _ stop: StopSignal, _ beforeExit: @escaping @Sendable (ExitStatus) async -> Void, within: Duration
    ) async -> Never {
        let next =
            stop.recordedRun.map { "resume it with `subrecon run --resume \($0)`" }
            ?? "no run was recorded (a dry run, or stopped before it was recorded), nothing to resume: start it again"
        let status: ExitStatus = stop.recordedRun != nil ? .stopped : stop.signalStatus ?? .unavailable
        FileHandle.standardError.write(Data("subrecon: \(cause) before the run could end cleanly; \(next)\n".utf8))
        let (done, finished) = AsyncStream<Void>.makeStream()
        Task {
            await beforeExit(status)
            finished.yield()
        }
        Task {
            try? await Task.sleep(for: within)
            finished.yield()
        }
        for await _ in done { break }
        // `_exit`, not `exit`: what holds the process here (a connection pool still dialling a database that is
        // gone) must not hold the exit's clean-up too. Output is flushed first.
        fflush(nil)
        _exit(status.rawValue)
    }
}
