import Foundation
import SubreconCore
import Testing

/// Where a nightly run starts reading a store feed (CONTRACT "Which users a run asks about", "Hostile answers and bounded work"): never after a window that was not
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

    static func window(
        readAt now: Date, feedsSince: Date? = nil, _ attempts: [FeedAttempt]?, asOf: Date = asOf, last: Date? = nil
    ) -> FeedWindow {
        FeedWindowRule.window(asOf: asOf, readAt: now, feedsSince: feedsSince, attempts: attempts, lastCompletedNightlyStart: last)
    }

    @Test("a window ends at the instant the feed is read up to: as-of, or the wall clock at the read when as-of is ahead of it")
    func windowEndsAtTheRead() {
        #expect(Self.window(readAt: Self.day(2), nil) == FeedWindow(since: Self.day(-3), until: Self.asOf), "a past as-of")
        let early = Self.asOf.addingTimeInterval(-600)
        let ahead = Self.window(readAt: early, nil)
        #expect(ahead == FeedWindow(since: Self.day(-3), until: early), "as-of 10 minutes ahead of the clock: up to the clock")
        #expect(!ahead.isEmpty)
        let given = Self.window(readAt: early, feedsSince: Self.day(-1), [])
        #expect(given == FeedWindow(since: Self.day(-1), until: early))
    }

    @Test("a rerun at the same future as-of reads from where the first read ended to its own read: nothing claimed unread")
    func rerunAtFutureAsOf() {
        let firstRead = Self.asOf.addingTimeInterval(-600)
        let first = Self.window(readAt: firstRead, nil)
        let attempts = [FeedAttempt(since: first.since, until: first.until, covered: true)]
        let secondRead = firstRead.addingTimeInterval(120)
        let second = Self.window(readAt: secondRead, attempts)
        #expect(second == FeedWindow(since: firstRead, until: secondRead))
        #expect(!second.isEmpty)
    }

    @Test("nothing left to read (start at or after the end) is an empty window: not requested, never a failure")
    func emptyWindow() {
        let covered = [FeedAttempt(since: Self.day(-3), until: Self.asOf, covered: true)]
        let replay = Self.window(readAt: Self.day(1), covered)
        #expect(replay == FeedWindow(since: Self.asOf, until: Self.asOf) && replay.isEmpty, "the same past as-of again")
        // A window an older build recorded up to a future as-of: nothing before the clock is left to read.
        let ahead = [FeedAttempt(since: Self.day(-3), until: Self.asOf.addingTimeInterval(900), covered: true)]
        let early = Self.asOf.addingTimeInterval(-600)
        let clamped = Self.window(readAt: early, ahead)
        #expect(clamped.isEmpty && clamped.since <= clamped.until && clamped.until == early)
        let future = Self.window(readAt: early, feedsSince: Self.asOf, [])
        #expect(future.isEmpty && future.until == early, "--feeds-since after the clock")
        #expect(!FeedWindow(since: Self.day(-1), until: Self.asOf).isEmpty)
    }
}
