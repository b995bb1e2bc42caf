import Foundation

/// One recorded attempt to read a store feed over `[since, until)` (CONTRACT "Hostile answers and bounded work").
public struct FeedAttempt: Sendable, Hashable {
    public var since: Date
    public var until: Date
    /// Read to its end by a run that completed: the window is covered. A failed, incomplete or interrupted read,
    /// or one by a run that never completed, is not.
    public var covered: Bool

    public init(since: Date, until: Date, covered: Bool) {
        self.since = since
        self.until = until
        self.covered = covered
    }
}

/// The window `[since, until)` one store feed is read over tonight.
public struct FeedWindow: Sendable, Hashable {
    public var since: Date
    public var until: Date

    public init(since: Date, until: Date) {
        self.since = since
        self.until = until
    }

    /// Nothing to read (the start at or after the end): the feed is not asked, and that is no failure.
    public var isEmpty: Bool { since >= until }
}

/// Where a nightly run starts and ends reading a store feed (CONTRACT "Which users a run asks about", "Hostile answers and bounded work"). Pure: the attempts come from the
/// database, the instant of the read from the caller's clock.
public enum FeedWindowRule {
    /// A feed never read looks this many days back from as-of.
    public static let firstRunDays = 3.0
    /// Never further back than this many days before as-of.
    public static let maxDays = 30.0
    /// Before windows were recorded, a feed started at the shard's last completed nightly run, at most this far back.
    public static let legacyMaxDays = 7.0

    /// The start of tonight's window for one feed of one shard: the earliest instant not covered since the first
    /// attempt still within `maxDays` of `asOf` (a failed or interrupted window is read again), at most `maxDays`
    /// back, never after `asOf`.
    ///
    /// - Parameters:
    ///   - attempts: this feed's recorded attempts for this shard ending after `asOf - maxDays`; nil when the feed
    ///     was never attempted (then: `lastCompletedNightlyStart`, at most `legacyMaxDays` back, else
    ///     `firstRunDays` back).
    public static func since(asOf: Date, attempts: [FeedAttempt]?, lastCompletedNightlyStart: Date?) -> Date {
        guard let attempts else {
            if let last = lastCompletedNightlyStart {
                return min(max(last, asOf.addingTimeInterval(-legacyMaxDays * 86_400)), asOf)
            }
            return asOf.addingTimeInterval(-firstRunDays * 86_400)
        }
        let earliest = asOf.addingTimeInterval(-maxDays * 86_400)
        var start = max(earliest, attempts.map(\.since).min() ?? earliest)
        for window in attempts.filter(\.covered).sorted(by: { $0.since < $1.since }) {
            guard window.since <= start else { break }
            start = max(start, window.until)
        }
        return min(start, asOf)
    }

    /// Tonight's window of one feed (docs/CONTRACT.md, Which users a run asks about): it ends at the instant the feed
    /// is read up to, `asOf` or, when `asOf` is ahead of the clock (a run may judge up to 15 minutes ahead), the wall
    /// clock at the read: a window never claims an instant nobody could have read yet. It starts at `feedsSince` when
    /// given, else at `since(asOf:attempts:lastCompletedNightlyStart:)`, never after its end: a window with nothing
    /// left to read is empty (`FeedWindow.isEmpty`).
    ///
    /// - Parameter now: the wall clock when the feed is read.
    public static func window(
        asOf: Date, readAt now: Date, feedsSince: Date?, attempts: [FeedAttempt]?, lastCompletedNightlyStart: Date?
    ) -> FeedWindow {
        let until = min(asOf, now)
        let start = feedsSince ?? since(asOf: asOf, attempts: attempts, lastCompletedNightlyStart: lastCompletedNightlyStart)
        return FeedWindow(since: min(start, until), until: until)
    }
}
