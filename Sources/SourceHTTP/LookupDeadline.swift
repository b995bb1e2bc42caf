import Foundation

/// The instant by which the lookups of the current task must be done: a user's deadline in a run, `explain`'s, a
/// feed's. A task-local, so every request made on the task's behalf sees it (the transport, the rate gate, a shared
/// token refresh started by it) without threading it through every client.
///
/// `SourceTransport` never starts a wait (a backoff, a 429's `Retry-After`, a paused rate gate) that would end past
/// it and bounds each attempt by the time left; `run(within:)` sets it and cancels the work at the deadline.
public enum LookupDeadline {
    /// The deadline of the current task; nil: none (unbounded but for each source's own limits).
    @TaskLocal public static var instant: ContinuousClock.Instant?

    /// Time left until the current deadline, never negative; nil without a deadline.
    public static func remaining(now: ContinuousClock.Instant = .now) -> Duration? {
        instant.map { max(.zero, now.duration(to: $0)) }
    }

    /// Runs `operation` with a deadline `limit` from now (or the outer deadline, when earlier) and cancels it at
    /// that deadline. `value` is what the operation returned (after its cancellation, if it was cut off: every wait
    /// of a lookup ends on cancellation); `cutOff` is true when the deadline passed first.
    public static func run<T: Sendable>(
        within limit: Duration, _ operation: @escaping @Sendable () async -> T
    ) async -> (value: T?, cutOff: Bool) {
        let own = ContinuousClock.now.advanced(by: max(limit, .zero))
        let deadline = instant.map { min($0, own) } ?? own
        return await $instant.withValue(deadline) {
            let (outcome, cutOff) = await DeadlineAlarm.race(until: deadline, operation)
            return (try? outcome.get(), cutOff)
        }
    }
}

/// A wait refused because it would end past the lookup's deadline (`LookupDeadline`): operator text naming the
/// wait and the time left. Thrown by a gate's `acquire(within:)`; the transport reports it as `.beyondDeadline`.
public struct DeadlineRefusal: Error, Sendable, Hashable, CustomStringConvertible {
    public var description: String

    public init(_ description: String) { self.description = description }

    /// "<what> of 59 s, more than the 2 s left of this lookup's deadline".
    public static func wait(_ what: String, _ wait: Duration, left: Duration) -> DeadlineRefusal {
        DeadlineRefusal(
            "\(what) of \(format(wait)) s, more than the \(format(left)) s left of this lookup's deadline; asked again next run")
    }

    static func format(_ duration: Duration) -> String {
        let seconds = duration.fractionalSeconds
        return seconds >= 10 || seconds == seconds.rounded() ? String(Int64(seconds.rounded())) : String(format: "%.1f", seconds)
    }
}
