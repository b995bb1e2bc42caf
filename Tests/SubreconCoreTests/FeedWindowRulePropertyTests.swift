import Foundation
import PropertyBased
import SubreconCore
import SubreconTestKit
import Testing

/// Properties of `FeedWindowRule.since` over generated attempts (CONTRACT "Hostile answers and bounded work"): no instant of the last 30 days
/// that was attempted and not covered is ever skipped, and the window stays within its bounds. Each input comes from
/// one generated seed, which a failure names.
@Suite("Feed window rule: properties over generated attempts")
struct FeedWindowRulePropertyTests {
    static let asOf = Date(timeIntervalSince1970: 1_780_000_000)
    static let floor = asOf.addingTimeInterval(-FeedWindowRule.maxDays * 86_400)

    static func attempts(seed: UInt64) -> [FeedAttempt] {
        var random = SeededRandom(seed: seed)
        return (0..<random.int(0...8)).map { _ in
            let since = asOf.addingTimeInterval(Double(random.int(-50 * 24...0)) * 3_600)
            let until = since.addingTimeInterval(Double(random.int(0...5 * 24)) * 3_600)
            return FeedAttempt(since: since, until: min(until, asOf), covered: random.chance(0.6))
        }
    }

    static func isCovered(_ instant: Date, by attempts: [FeedAttempt]) -> Bool {
        attempts.contains { $0.covered && $0.since <= instant && instant < $0.until }
    }

    @Test("the start is within [as-of - 30 days, as-of], and every attempted instant not covered is at or after it")
    func neverSkipsAnUncoveredInstant() async {
        await propertyCheck(count: 3_000, input: Gen.uint64()) { seed in
            let attempts = Self.attempts(seed: seed)
            let start = FeedWindowRule.since(asOf: Self.asOf, attempts: attempts, lastCompletedNightlyStart: nil)
            #expect(start >= Self.floor && start <= Self.asOf, "seed \(seed)")
            // Candidate instants: every boundary of every attempt, clipped to the 30 days.
            let points = attempts.flatMap { [$0.since, $0.until] }.map { max($0, Self.floor) }
            for attempt in attempts where !attempt.covered {
                for point in points + [max(attempt.since, Self.floor)]
                where point >= attempt.since && point < attempt.until && !Self.isCovered(point, by: attempts) {
                    #expect(point >= start, "seed \(seed): \(point) was attempted, not covered, and skipped (start \(start))")
                }
            }
            if start < Self.asOf, !attempts.isEmpty {
                #expect(!Self.isCovered(start, by: attempts), "seed \(seed): the start \(start) is already covered")
            }
        }
    }
}
