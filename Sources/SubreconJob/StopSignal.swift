import SubreconCore
import Synchronization

/// A request to stop a run early and cleanly (SIGTERM / SIGINT, a host ServiceGroup's graceful shutdown, or the shard
/// lock's connection lost).
///
/// The job watches it between steps: in-flight lookups are cancelled and dropped (those users are asked again by
/// `--resume`), the verdicts already validated are written to the ledger, and the run ends with exit 75. Unlike
/// task cancellation it leaves the job's own database writes running, so nothing already decided is lost.
public final class StopSignal: Sendable {
    private struct State {
        var reason: String?
        var signalStatus: ExitStatus?
        var recordedRun: String?
        var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
        var nextID = 0
    }
    private let state = Mutex(State())

    public init() {}

    /// Why the run was asked to stop; nil while it may go on.
    public var reason: String? { state.withLock { $0.reason } }

    /// The run this signal stops once `reconcile_runs` holds it (nil before, and for a dry run): what a forced exit
    /// names for `--resume`.
    public var recordedRun: String? { state.withLock { $0.recordedRun } }

    /// Notes that run `id` is recorded, so resuming it is possible from here on.
    public func recorded(run id: String) { state.withLock { $0.recordedRun = id } }

    /// The exit a stop by a signal gives when no recorded run can be resumed (a dry run, or a run stopped before it was
    /// recorded): 130 for SIGINT, 143 for SIGTERM; nil when the stop came from elsewhere (a lost shard lock).
    public var signalStatus: ExitStatus? { state.withLock { $0.signalStatus } }

    /// Asks the run to stop; the first reason wins. `signalStatus`: the signal's exit when nothing can be resumed.
    public func stop(reason: String, signalStatus: ExitStatus? = nil) {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            if state.reason == nil { (state.reason, state.signalStatus) = (reason, signalStatus) }
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns once a stop is asked for, or when the calling task is cancelled.
    public func wait() async {
        let id = state.withLock { state -> Int in
            state.nextID += 1
            return state.nextID
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLock { state -> Bool in
                    if state.reason != nil || Task.isCancelled { return true }
                    state.waiters[id] = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
            waiter?.resume()
        }
    }
}

/// Thrown by the job when a `StopSignal` ended it.
struct RunStopped: Error, CustomStringConvertible {
    var reason: String
    var description: String { reason }
}
