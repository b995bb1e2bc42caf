import Foundation
import SourceHTTP
import Testing

@Suite("Request budgets: AIMD after 429s, and the app's rate split across shards")
struct AdaptiveRateTests {
    @Test("a 429 halves the rate, once per holdoff, never below the floor")
    func multiplicativeDecrease() {
        var schedule = TokenBucketSchedule(rate: 40)
        #expect(schedule.rate == 40 && schedule.maximumRate == 40 && schedule.minimumRate == 4)
        schedule.slowDown(now: .zero)
        #expect(schedule.rate == 20)
        schedule.slowDown(now: .milliseconds(500))
        #expect(schedule.rate == 20, "the rest of the same burst does not halve again")
        schedule.slowDown(now: .seconds(1))
        #expect(schedule.rate == 10)
        schedule.slowDown(now: .seconds(2))
        schedule.slowDown(now: .seconds(3))
        schedule.slowDown(now: .seconds(4))
        #expect(schedule.rate == 4, "floor: a tenth of the configured rate")
        #expect(schedule.lastDecrease == .seconds(4))
    }

    @Test("without 429s the rate climbs back a tenth of the maximum per quiet second, up to the maximum")
    func additiveIncrease() {
        var schedule = TokenBucketSchedule(rate: 50)
        schedule.slowDown(now: .zero)
        #expect(schedule.rate == 25)
        _ = schedule.reserve(now: .milliseconds(999))
        #expect(schedule.rate == 25, "no whole quiet interval yet")
        _ = schedule.reserve(now: .seconds(1))
        #expect(schedule.rate == 30)
        _ = schedule.reserve(now: .milliseconds(3500))
        #expect(schedule.rate == 40)
        // A 429 restarts the quiet interval: no climb for the second after it.
        schedule.slowDown(now: .milliseconds(3600))
        #expect(schedule.rate == 20)
        _ = schedule.reserve(now: .milliseconds(4500))
        #expect(schedule.rate == 20)
        _ = schedule.reserve(now: .seconds(60))
        #expect(schedule.rate == 50, "back to the configured maximum, never above")
        _ = schedule.reserve(now: .seconds(600))
        #expect(schedule.rate == 50)
    }

    @Test("a lowered rate spaces requests wider; the climb narrows them again")
    func spacingFollowsRate() {
        var schedule = TokenBucketSchedule(rate: 10)
        #expect(schedule.reserve(now: .zero) == .zero)
        #expect(schedule.reserve(now: .zero) == .milliseconds(100))
        schedule.slowDown(now: .zero)
        // nextSlot was 200 ms; at 5/s the following request goes 200 ms after it.
        #expect(schedule.reserve(now: .zero) == .milliseconds(200))
        #expect(schedule.reserve(now: .zero) == .milliseconds(400))
        let later = schedule.reserve(now: .seconds(10))
        #expect(schedule.rate == 10)
        #expect(schedule.reserve(now: .seconds(10)) == later + .milliseconds(100))
    }

    @Test("the gate lowers the rate for every worker after one 429 and recovers on the injected clock")
    func gateAdapts() async throws {
        let clock = JumpingClock()
        let gate = SharedRateLimiter(rate: 20, clock: clock)
        try await gate.acquire()
        await gate.backOff(for: .milliseconds(100))
        #expect(await gate.state.rate == 10)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<10 { group.addTask { try await gate.acquire() } }
            try await group.waitForAll()
        }
        // After the pause, 10 requests at 10/s: the last one 9 intervals of 100 ms after the first.
        #expect(clock.now.offset == .milliseconds(100) + .milliseconds(100) * 9)
        clock.advance(by: .seconds(30))
        try await gate.acquire()
        #expect(await gate.state.rate == 20)
    }

    @Test(
        "a --shard I/N run takes 1/N of the app's budget; 0 stays unlimited",
        arguments: [
            (50.0, "0/1", 50.0), (50, "0/4", 12.5), (50, "3/4", 12.5), (10, "1/3", 10.0 / 3), (0, "0/4", 0),
            (-1, "0/2", 0), (.nan, "0/2", 0),
        ] as [(Double, String, Double)])
    func perShard(rate: Double, shard: String, expected: Double) throws {
        let count = try #require(shard.split(separator: "/").last.flatMap { Int($0) })
        #expect(RequestBudget.perShard(rate, shards: count) == expected)
    }

    @Test("the summary note states this shard's rate and the app's")
    func note() throws {
        #expect(
            RequestBudget.describe(50, shard: "1/4", shards: 4)
                == "budget 12.5 req/s (1/4 of the app's 50 req/s, shard 1/4)")
        #expect(RequestBudget.describe(10, shard: "0/1", shards: 1) == "budget 10 req/s")
        #expect(RequestBudget.describe(0, shard: "0/2", shards: 2) == "budget unlimited")
    }
}
