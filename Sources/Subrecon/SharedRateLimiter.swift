import AppStore
import RevenueCat

/// The arithmetic of one source's request budget: a token bucket written as a schedule (GCRA), pure and clock-free.
///
/// Every request gets a send time: at `rate` per second, with at most `burst` requests sent back to back after
/// an idle spell. `pause(until:)` (a 429) pushes every later send time past the pause, so all workers slow down
/// together. Instants are durations since any fixed origin the caller chooses.
public struct TokenBucketSchedule: Sendable, Hashable {
    /// Requests per second; > 0.
    public let rate: Double
    /// Requests that may go at once after an idle spell; >= 1.
    public let burst: Int
    /// The earliest time the next request may go if the bucket were full (theoretical arrival time).
    public private(set) var nextSlot: Duration
    /// No request goes before this instant (set by a 429).
    public private(set) var pausedUntil: Duration

    public init(rate: Double, burst: Int = 1, start: Duration = .zero) {
        self.rate = max(rate, 0.001)
        self.burst = max(1, burst)
        self.nextSlot = start
        self.pausedUntil = start
    }

    /// Time between two requests at the configured rate.
    public var interval: Duration { .seconds(1 / rate) }

    /// Reserves the next send time for a request asked for at `now`; the caller waits until then.
    public mutating func reserve(now: Duration) -> Duration {
        let theoretical = max(nextSlot, now, pausedUntil)
        let allowance = interval * (burst - 1)
        let sendAt = max(now, pausedUntil, theoretical - allowance)
        nextSlot = theoretical + interval
        return sendAt
    }

    /// The source asked for quiet until `until`: nobody sends before it, and the schedule restarts from there
    /// (no burst of saved-up tokens right after the pause).
    public mutating func pause(until: Duration) {
        pausedUntil = max(pausedUntil, until)
        nextSlot = max(nextSlot, until + interval * (burst - 1))
    }

    /// Whether a request reserved earlier must ask again because a pause began after it was scheduled.
    public func isPaused(at now: Duration) -> Bool { now < pausedUntil }
}

/// One source's request budget shared by every worker of a run: the `RequestGate` of the RevenueCat client and
/// the `AppStoreRequestGate` of the App Store client.
///
/// `acquire` waits for the request's slot; a 429 (`backOff`) pauses the bucket for everybody for the wait the
/// client computed from `Retry-After` / `backoff_ms`. It paces requests only: it does not limit how many are in
/// flight (the job's concurrency does) and never serialises users.
public actor SharedRateLimiter<C: Clock>: RequestGate, AppStoreRequestGate where C.Duration == Duration {
    private let clock: C
    private let origin: C.Instant
    private var schedule: TokenBucketSchedule

    /// - Parameters:
    ///   - rate: requests per second (> 0; use no limiter at all for "unlimited").
    ///   - burst: requests allowed back to back after an idle spell.
    ///   - clock: the clock to read and sleep on (injected in tests).
    public init(rate: Double, burst: Int = 1, clock: C) {
        self.clock = clock
        self.origin = clock.now
        self.schedule = TokenBucketSchedule(rate: rate, burst: burst)
    }

    /// The schedule as it stands (for tests and diagnostics).
    public var state: TokenBucketSchedule { schedule }

    private var elapsed: Duration { origin.duration(to: clock.now) }

    /// Waits until one more request may be sent. Throws `CancellationError` when the task is cancelled.
    public func acquire() async throws {
        while true {
            try Task.checkCancellation()
            let sendAt = schedule.reserve(now: elapsed)
            if sendAt > elapsed { try await clock.sleep(until: origin.advanced(by: sendAt), tolerance: nil) }
            // A 429 seen by another worker while this one slept: take a slot after the pause instead.
            if !schedule.isPaused(at: elapsed) { return }
        }
    }

    /// The source answered 429 and asked for `duration` of quiet: nobody sends until it has passed.
    public func backOff(for duration: Duration) async {
        schedule.pause(until: elapsed + duration)
    }

    public func acquire(source: String) async throws { try await acquire() }

    public func backOff(source: String, for duration: Duration) async { await backOff(for: duration) }
}

extension SharedRateLimiter where C == ContinuousClock {
    /// A limiter on the continuous clock; nil when `rate` is 0 or less (unlimited).
    public static func perSecond(_ rate: Double, burst: Int = 1) -> SharedRateLimiter<ContinuousClock>? {
        rate > 0 ? SharedRateLimiter(rate: rate, burst: burst, clock: ContinuousClock()) : nil
    }
}
