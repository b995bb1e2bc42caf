import Foundation
import SubreconCore
import SubreconPorts
import SubreconReports
import Synchronization
import Testing

@testable import SubreconJob

/// The run's board of source health, on an injected clock (docs/CONTRACT.md "Hostile answers and bounded work"): a
/// source is down only when its failures really span the window; a wait it asks for pauses it, however long.
@Suite("Source health board: a long wait asked for is a pause, not a minute of failures")
struct SourceHealthBoardTests {
    /// A monotonic clock the test moves by hand.
    final class ManualClock: Sendable {
        private let origin = ContinuousClock.now
        private let offset = Mutex(Duration.zero)
        func advance(_ by: Duration) { offset.withLock { $0 += by } }
        var now: ContinuousClock.Instant { origin + offset.withLock { $0 } }
    }

    static func board(_ clock: ManualClock) -> SourceHealthBoard {
        SourceHealthBoard(window: .seconds(60), clock: { clock.now })
    }

    @Test("two 429 Retry-After: 60 a millisecond apart (16 users in flight): the wait goes ahead, the source is not down")
    func twoRateLimitsAMillisecondApart() {
        let clock = ManualClock()
        let board = Self.board(clock)
        board.record(source: "revenuecat", status: 429)
        clock.advance(.milliseconds(1))
        board.record(source: "revenuecat", status: 429)
        #expect(board.refusal(source: "revenuecat", afterWaiting: .seconds(60)) == nil, "a millisecond of failures is no minute")
        #expect(board.refusal(source: "revenuecat", afterWaiting: .seconds(3600)) == nil, "the wait's own cap bounds a longer one")
        #expect(board.refusal(source: "revenuecat") == nil)
        #expect(board.sourcesDown.isEmpty)
        clock.advance(.seconds(60))
        board.record(source: "revenuecat", status: 200)
        #expect(board.refusal(source: "revenuecat") == nil, "asked again after the pause, it answered")
        #expect(board.sourcesDown.isEmpty)
    }

    @Test("a minute of nothing but failures declares it down at the failure that completes the minute")
    func aMinuteOfFailures() {
        let clock = ManualClock()
        let board = Self.board(clock)
        board.record(source: "stripe", status: 429)
        clock.advance(.seconds(59))
        board.record(source: "stripe", status: 503)
        #expect(board.refusal(source: "stripe", afterWaiting: .seconds(59)) == nil, "59 s of failures: paused, not down")
        clock.advance(.seconds(1))
        board.record(source: "stripe", status: 429)
        let refusal = board.refusal(source: "stripe")
        #expect(refusal?.contains("stripe was declared down") == true, "\(refusal ?? "up")")
        #expect(board.refusal(source: "stripe", afterWaiting: .zero) != nil)
        #expect(board.sourcesDown.map(\.source) == ["stripe"])
    }

    @Test("a success in between resets the stretch")
    func successResets() {
        let clock = ManualClock()
        let board = Self.board(clock)
        board.record(source: "google_play", status: 503)
        clock.advance(.seconds(50))
        board.record(source: "google_play", status: 404)
        clock.advance(.seconds(20))
        board.record(source: "google_play", status: 503)
        #expect(board.refusal(source: "google_play", afterWaiting: .seconds(60)) == nil, "the stretch began at 70 s")
        clock.advance(.seconds(59))
        board.record(source: "google_play", status: nil)
        #expect(board.refusal(source: "google_play") == nil)
        clock.advance(.seconds(1))
        board.record(source: "google_play", status: nil)
        #expect(board.refusal(source: "google_play") != nil)
    }
}
