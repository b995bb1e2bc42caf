import Foundation
import SubreconCore
import SubreconReports
import Synchronization

/// Every source's `SourceHealth` during one run, fed by every HTTP attempt (through `RequestStats`) and asked before
/// every attempt: a source declared down is not asked again this run; its lookups fail at once naming it, so a
/// night with one dead source finishes instead of asking it for every user (CONTRACT "Hostile answers and bounded work").
public final class SourceHealthBoard: Sendable {
    private struct Entry {
        var health: SourceHealth
        var declaredAt: Date?
    }

    private let entries = Mutex<[String: Entry]>([:])
    private let window: Duration
    private let clock: @Sendable () -> ContinuousClock.Instant
    private let origin: ContinuousClock.Instant
    private let wallClock: @Sendable () -> Date

    /// - Parameters:
    ///   - window: how long a source may answer nothing but failures before it is declared down.
    ///   - clock: the monotonic clock the window is measured on (tests inject a fast one).
    ///   - wallClock: the instant written as `since`.
    public init(
        window: Duration = SourceHealth.defaultWindow, clock: @escaping @Sendable () -> ContinuousClock.Instant = { .now },
        wallClock: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.window = window
        self.clock = clock
        self.origin = clock()
        self.wallClock = wallClock
    }

    /// One attempt to `source` got `status` (nil: no HTTP answer).
    public func record(source: String, status: Int?) {
        let now = origin.duration(to: clock())
        entries.withLock { entries in
            var entry = entries[source] ?? Entry(health: SourceHealth(window: window))
            let wasUp = !entry.health.isDown
            entry.health.record(SourceHealth.outcome(status: status), status: status, at: now)
            if wasUp && entry.health.isDown { entry.declaredAt = wallClock() }
            entries[source] = entry
        }
    }

    /// Why `source` is not asked any more (operator text for the users' errors), or nil while it is up.
    public func refusal(source: String) -> String? {
        guard let down = sourcesDown.first(where: { $0.source == source }) else { return nil }
        return "\(source) was declared down at \(down.since) (\(down.reason)); not asked for the rest of this run, asked again next run"
    }

    /// Why `source` is not asked after a wait of `wait`: only when it is already down. The wait itself never
    /// declares it down, however long (two `429 Retry-After: 60` a millisecond apart are a millisecond of failures,
    /// not a minute): the source is paused for the wait and asked again; only failures that really span the window
    /// end it (CONTRACT "Hostile answers and bounded work").
    public func refusal(source: String, afterWaiting wait: Duration) -> String? {
        refusal(source: source)
    }

    /// The sources declared down so far, by name.
    public var sourcesDown: [RunSummary.SourceDown] {
        entries.withLock { entries in
            entries.compactMap { source, entry in
                guard entry.health.isDown, let at = entry.declaredAt else { return nil }
                return RunSummary.SourceDown(source: source, since: ISO8601.string(at), reason: entry.health.reason)
            }.sorted { $0.source < $1.source }
        }
    }
}
