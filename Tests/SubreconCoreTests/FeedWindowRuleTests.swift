import Foundation
import SubreconCore
import Testing

/// Where a nightly run starts reading a store feed (SPEC 5.1, 5.11, issue 19): never after a window that was not
/// read to its end, at most 30 days back.
@Suite("Feed window rule")
struct FeedWindowRuleTests {
    static let asOf = Date(timeIntervalSince1970: 1_780_000_000)
    static func day(_ n: Double) -> Date { asOf.addingTimeInterval(n * 86_400) }
    static func since(_ attempts: [FeedAttempt]?, last: Date? = nil) -> Date {
        FeedWindowRule.since(asOf: asOf, attempts: attempts, lastCompletedNightlyStart: last)
    }

    @Test("a feed never attempted: 3 days back on a first run, else the last completed nightly run (at most 7 days)")
    func neverAttempted() {
        #expect(Self.since(nil) == Self.day(-3))
        #expect(Self.since(nil, last: Self.day(-1)) == Self.day(-1))
        #expect(Self.since(nil, last: Self.day(-20)) == Self.day(-7))
    }

    @Test("covered windows end to end: tonight starts where the last one ended")
    func contiguous() {
        let attempts = [
            FeedAttempt(since: Self.day(-5), until: Self.day(-2), covered: true),
            FeedAttempt(since: Self.day(-2), until: Self.day(-1), covered: true),
        ]
        #expect(Self.since(attempts) == Self.day(-1))
    }

    @Test("a failed or interrupted window is read again from its start, whatever was covered after it")
    func failedWindowIsReadAgain() {
        let attempts = [
            FeedAttempt(since: Self.day(-5), until: Self.day(-2), covered: true),
            FeedAttempt(since: Self.day(-2), until: Self.day(-1), covered: false),
            FeedAttempt(since: Self.day(-1), until: Self.day(-0.5), covered: true),
        ]
        #expect(Self.since(attempts) == Self.day(-2))
        #expect(Self.since([FeedAttempt(since: Self.day(-4), until: Self.day(-1), covered: false)]) == Self.day(-4))
    }

    @Test("never more than 30 days back, and never after as-of")
    func bounds() {
        #expect(Self.since([FeedAttempt(since: Self.day(-45), until: Self.day(-40), covered: false)]) == Self.day(-30))
        #expect(Self.since([]) == Self.day(-30), "attempted, but every attempt ended more than 30 days ago")
        #expect(Self.since([FeedAttempt(since: Self.day(-45), until: Self.day(-10), covered: true)]) == Self.day(-10))
        #expect(Self.since([FeedAttempt(since: Self.day(-2), until: Self.day(1), covered: true)]) == Self.asOf)
    }
}
