import Foundation
import SourceHTTP
import Testing

/// A clock that never waits: sleeping moves its time to the deadline at once, so the times at which requests
/// were let through can be asserted exactly (no real time is involved).
final class JumpingClock: Clock, @unchecked Sendable {
    struct Instant: InstantProtocol {
        var offset: Duration
        func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        func duration(to other: Instant) -> Duration { other.offset - offset }
        static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
    }

    private let lock = NSLock()
    private var current = Instant(offset: .zero)
    var now: Instant { lock.withLock { current } }
    var minimumResolution: Duration { .nanoseconds(1) }

    func sleep(until deadline: Instant, tolerance: Duration?) async throws {
        lock.withLock { current = max(current, deadline) }
    }

    func advance(by duration: Duration) { lock.withLock { current = current.advanced(by: duration) } }
}

@Suite("Shared rate limiter: token bucket schedule and gate")
struct SharedRateLimiterTests {
    @Test("requests asked for at once are spread at the configured rate")
    func spreadsAtRate() {
        var schedule = TokenBucketSchedule(rate: 10)
        let times = (0..<5).map { _ in schedule.reserve(now: .zero) }
        #expect(times == [.zero, .milliseconds(100), .milliseconds(200), .milliseconds(300), .milliseconds(400)])
    }

    @Test("after an idle spell at most the burst goes at once")
    func burstAfterIdle() {
        var schedule = TokenBucketSchedule(rate: 10, burst: 3)
        _ = schedule.reserve(now: .zero)
        let now = Duration.seconds(60)
        let times = (0..<5).map { _ in schedule.reserve(now: now) }
        #expect(times == [now, now, now, now + .milliseconds(100), now + .milliseconds(200)])
    }

    @Test("a pause pushes every later request past it and restarts without a burst")
    func pauseForEverybody() {
        var schedule = TokenBucketSchedule(rate: 50, burst: 5)
        _ = schedule.reserve(now: .zero)
        schedule.pause(until: .seconds(2))
        #expect(schedule.isPaused(at: .seconds(1)))
        #expect(!schedule.isPaused(at: .seconds(2)))
        let times = (0..<3).map { _ in schedule.reserve(now: .milliseconds(10)) }
        #expect(times == [.seconds(2), .seconds(2) + .milliseconds(20), .seconds(2) + .milliseconds(40)])
    }

    @Test("a shorter pause never shortens a longer one")
    func pausesOnlyGrow() {
        var schedule = TokenBucketSchedule(rate: 1)
        schedule.pause(until: .seconds(5))
        schedule.pause(until: .seconds(3))
        #expect(schedule.pausedUntil == .seconds(5))
        #expect(schedule.reserve(now: .zero) == .seconds(5))
    }

    @Test("the gate lets concurrent workers through one interval apart on the injected clock")
    func gatePacesWorkers() async throws {
        let clock = JumpingClock()
        let gate = SharedRateLimiter(rate: 20, clock: clock)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<40 { group.addTask { try await gate.acquire() } }
            try await group.waitForAll()
        }
        // 40 requests at 20/s: the last one went 39 intervals after the first.
        #expect(clock.now.offset == .milliseconds(50) * 39)
        #expect(await gate.state.nextSlot == .seconds(2))
    }

    @Test("a 429 seen by one worker makes the next request of any worker wait for it")
    func backOffIsShared() async throws {
        let clock = JumpingClock()
        let gate = SharedRateLimiter(rate: 10, clock: clock)
        try await gate.acquire()
        await gate.backOff(for: .seconds(3))
        try await gate.acquire()
        #expect(clock.now.offset == .seconds(3))
        await gate.backOff(for: .seconds(1))
        try await gate.acquire()
        #expect(clock.now.offset == .seconds(4))
    }

    @Test("rate 0 means no limiter at all")
    func unlimited() {
        #expect(SharedRateLimiter<ContinuousClock>.perSecond(0) == nil)
        #expect(SharedRateLimiter<ContinuousClock>.perSecond(5) != nil)
    }
}

@Suite("Shared rate limiter: never holds a lookup past its deadline")
struct SharedRateLimiterDeadlineTests {
    @Test("a 429 pause longer than the time left is refused at once, reserving nothing; within the time left it is waited")
    func pauseBeyondDeadline() async throws {
        let clock = JumpingClock()
        let limiter = SharedRateLimiter(rate: 10, clock: clock)
        try await limiter.acquire()
        await limiter.backOff(for: .seconds(59))
        let before = await limiter.state
        await #expect(throws: DeadlineRefusal.self) { try await limiter.acquire(within: .seconds(2)) }
        #expect(clock.now.offset == .zero, "nothing slept")
        #expect(await limiter.state == before, "no slot reserved")
        try await limiter.acquire(within: .seconds(60))
        #expect(clock.now.offset >= .seconds(59))
    }
}
