import NIOCore
import NIOPosix
import Synchronization

/// Work raced against a deadline it nearly always beats: a lookup's or a request's.
///
/// The deadline is a timer on NIO's event loops (the ones AsyncHTTPClient runs on), taken back as soon as the work
/// ends first: nothing of a cut-short wait stays queued, and no task of its own runs per wait. (A cancelled
/// `Task.sleep` cannot take its timer back: the timer stays queued, with its task's memory, until the instant it was
/// set for, so a night raced against sleeps keeps every recent wait in memory and wakes once for each.)
public enum DeadlineAlarm {
    /// Runs `operation` in a task of its own and cancels that task at `deadline`. Returns what it returned or threw
    /// (after its cancellation, when it was cut off: every wait of a lookup ends on cancellation), and whether the
    /// deadline came first. Cancelling the caller cancels the operation too.
    public static func race<T: Sendable>(
        until deadline: ContinuousClock.Instant, _ operation: @escaping @Sendable () async throws -> T
    ) async -> (outcome: Result<T, any Error>, cutOff: Bool) {
        let work = Task { try await operation() }
        let alarm = Alarm { work.cancel() }
        let timer = alarm.arm(at: deadline)
        let outcome = await withTaskCancellationHandler {
            await work.result
        } onCancel: {
            work.cancel()
        }
        let cutOff = !alarm.disarm()
        timer?.cancel()
        return (outcome, cutOff)
    }

    /// One deadline's timer: rings once (cancelling the work) unless disarmed first.
    private final class Alarm: NIOScheduledCallbackHandler, Sendable {
        private static let armed: UInt8 = 0
        private static let disarmed: UInt8 = 1
        private static let rung: UInt8 = 2
        private let state = Atomic<UInt8>(Alarm.armed)
        private let ring: @Sendable () -> Void

        init(ring: @escaping @Sendable () -> Void) { self.ring = ring }

        /// Schedules the ring at `deadline`. An event loop that refuses the timer (only one shut down) rings at once:
        /// work without its deadline is never started unbounded.
        func arm(at deadline: ContinuousClock.Instant) -> NIOScheduledCallback? {
            // NIO clamps: a deadline too far to count in nanoseconds is its distant future.
            let left = TimeAmount(max(.zero, ContinuousClock.now.duration(to: deadline)))
            do {
                return try MultiThreadedEventLoopGroup.singleton.any().scheduleCallback(in: left, handler: self)
            } catch {
                ringOnce()
                return nil
            }
        }

        /// True when the work ended before the deadline rang.
        func disarm() -> Bool {
            state.compareExchange(expected: Alarm.armed, desired: Alarm.disarmed, ordering: .acquiringAndReleasing).exchanged
        }

        func handleScheduledCallback(eventLoop: some EventLoop) { ringOnce() }

        private func ringOnce() {
            if state.compareExchange(expected: Alarm.armed, desired: Alarm.rung, ordering: .acquiringAndReleasing).exchanged {
                ring()
            }
        }
    }
}
