import Foundation

/// The arithmetic of one source's request budget: a token bucket written as a schedule (GCRA) whose rate adapts
/// (AIMD), pure and clock-free.
///
/// Every request gets a send time: at `rate` per second, with at most `burst` requests sent back to back after
/// an idle spell. A 429 (`slowDown(now:)`) halves the rate, down to a floor, at most once per `decreaseHoldoff`
/// (the other answers of the same burst were already on their way); every `increaseInterval` without a 429 adds
/// `increaseStep` back, up to `maximumRate`, the configured budget. `pause(until:)` pushes every later send time
/// past the pause a 429 asked for, so all workers slow down together. Instants are durations since any fixed
/// origin the caller chooses.
public struct TokenBucketSchedule: Sendable, Hashable {
    /// The configured budget in requests per second (> 0): the rate never goes above it.
    public let maximumRate: Double
    /// The rate never goes below it after 429s (`maximumRate` × `floorFraction`).
    public let minimumRate: Double
    /// Requests per second now; `minimumRate ... maximumRate`.
    public private(set) var rate: Double
    /// Requests that may go at once after an idle spell; >= 1.
    public let burst: Int
    /// The earliest time the next request may go if the bucket were full (theoretical arrival time).
    public private(set) var nextSlot: Duration
    /// No request goes before this instant (set by a 429).
    public private(set) var pausedUntil: Duration
    /// When the rate was last lowered (nil: never).
    public private(set) var lastDecrease: Duration?
    /// Start of the current interval without a 429 (the rate climbs once per whole interval since).
    private var climbFrom: Duration

    /// Multiplicative decrease per 429.
    public static let decreaseFactor = 0.5
    /// The floor, as a share of the maximum rate.
    public static let floorFraction = 0.1
    /// 429s within this long after a decrease do not lower the rate again.
    public static let decreaseHoldoff = Duration.seconds(1)
    /// One step of the climb back per interval without a 429 ...
    public static let increaseInterval = Duration.seconds(1)
    /// ... of this share of the maximum rate (from the floor back to the maximum in 9 quiet seconds).
    public static let increaseFraction = 0.1

    public init(rate: Double, burst: Int = 1, start: Duration = .zero) {
        let maximum = rate.isFinite ? max(rate, 0.001) : 1e9
        self.maximumRate = maximum
        self.minimumRate = maximum * Self.floorFraction
        self.rate = maximum
        self.burst = max(1, burst)
        self.nextSlot = start
        self.pausedUntil = start
        self.climbFrom = start
    }

    /// Time between two requests at the current rate.
    public var interval: Duration { .nanoseconds(Int64((1e9 / rate).rounded())) }

    /// Reserves the next send time for a request asked for at `now`; the caller waits until then.
    public mutating func reserve(now: Duration) -> Duration {
        climb(to: now)
        let theoretical = max(nextSlot, now, pausedUntil)
        let allowance = interval * (burst - 1)
        let sendAt = max(now, pausedUntil, theoretical - allowance)
        nextSlot = theoretical + interval
        return sendAt
    }

    /// The source answered 429 at `now`: halve the rate (not below the floor), unless it was already lowered
    /// within `decreaseHoldoff`; the climb back starts again from `now`.
    public mutating func slowDown(now: Duration) {
        climbFrom = max(climbFrom, now)
        if let lastDecrease, now < lastDecrease + Self.decreaseHoldoff { return }
        rate = max(rate * Self.decreaseFactor, minimumRate)
        lastDecrease = now
    }

    /// The source asked for quiet until `until`: nobody sends before it, and the schedule restarts from there
    /// (no burst of saved-up tokens right after the pause).
    public mutating func pause(until: Duration) {
        pausedUntil = max(pausedUntil, until)
        nextSlot = max(nextSlot, until + interval * (burst - 1))
    }

    /// Whether a request reserved earlier must ask again because a pause began after it was scheduled.
    public func isPaused(at now: Duration) -> Bool { now < pausedUntil }

    /// Additive increase: one step per whole `increaseInterval` since the last 429 or the last step.
    private mutating func climb(to now: Duration) {
        guard rate < maximumRate else {
            climbFrom = max(climbFrom, now)
            return
        }
        guard now > climbFrom else { return }
        let steps = ((now - climbFrom) / Self.increaseInterval).rounded(.down)
        guard steps >= 1 else { return }
        rate = min(maximumRate, rate + steps * maximumRate * Self.increaseFraction)
        climbFrom = climbFrom + Self.increaseInterval * steps
    }
}

/// One source's request budget shared by every worker of a run: the `RequestGate` its `SourceTransport` asks
/// (one limiter per source).
///
/// `acquire` waits for the request's slot; a 429 (`backOff`) lowers the rate for everybody (see
/// `TokenBucketSchedule`) and pauses the bucket for the wait the client computed from `Retry-After` / `backoff_ms`.
/// It paces requests only: it does not limit how many are in flight (the job's concurrency does) and never
/// serialises users. A `--shard I/N` run is given 1/N of the app's rate (`RequestBudget`).
public actor SharedRateLimiter<C: Clock>: RequestGate where C.Duration == Duration {
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

    /// Waits for a slot unless it lies more than `limit` ahead (a pause a 429 asked for, or a slowed rate): then
    /// throws `DeadlineRefusal` at once, reserving nothing, so the lookup ends within its deadline.
    public func acquire(within limit: Duration) async throws {
        try Task.checkCancellation()
        var trial = schedule
        let now = elapsed
        let wait = trial.reserve(now: now) - now
        if wait > limit {
            throw DeadlineRefusal.wait(
                "the shared rate limit (paused or slowed by the source's 429s) would hold this request", wait, left: limit)
        }
        try await acquire()
    }

    /// The source answered 429 and asked for `duration` of quiet: the rate drops and nobody sends until it has passed.
    public func backOff(for duration: Duration) async {
        let now = elapsed
        schedule.slowDown(now: now)
        schedule.pause(until: now + duration)
    }
}

extension SharedRateLimiter where C == ContinuousClock {
    /// A limiter on the continuous clock; nil when `rate` is 0 or less (unlimited).
    public static func perSecond(_ rate: Double, burst: Int = 1) -> SharedRateLimiter<ContinuousClock>? {
        rate > 0 ? SharedRateLimiter(rate: rate, burst: burst, clock: ContinuousClock()) : nil
    }
}
