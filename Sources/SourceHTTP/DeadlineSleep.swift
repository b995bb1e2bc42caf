import Foundation

/// A wait for a deadline that is usually cut short: a lookup's or a request's deadline, raced against the work it
/// bounds, which nearly always ends first.
///
/// A cancelled `Task.sleep` resumes at once, but the runtime cannot take its timer back: the timer stays queued, with
/// its task's memory, until the instant it was set for. One 120 s sleep per user then keeps every user of the last two
/// minutes in memory, a night's memory growing with its size. Sleeping toward the deadline in slices of at most
/// `slice` leaves at most one slice's timer behind each cut-short wait, so what stays queued is bounded by the rate of
/// waits times one slice, whatever the deadline and the night's size.
enum DeadlineSleep {
    /// The longest single sleep: one second bounds the leftover timers at about a second's worth of waits.
    static let slice: Duration = .seconds(1)

    /// Returns at `deadline`; throws `CancellationError` as soon as the task is cancelled.
    static func until(_ deadline: ContinuousClock.Instant) async throws {
        while true {
            let now = ContinuousClock.now
            guard now < deadline else { return }
            try await Task.sleep(until: min(deadline, now.advanced(by: slice)), clock: .continuous)
        }
    }

    /// Returns after `duration`; throws `CancellationError` as soon as the task is cancelled.
    static func `for`(_ duration: Duration) async throws {
        try await until(ContinuousClock.now.advanced(by: duration))
    }
}
