/// Whether a source still answers, judged from the outcomes of the requests made to it (CONTRACT "Hostile answers and bounded work"): a source that
/// answered nothing but 429s, 5xx, timeouts or network errors for a whole `window` (no success since its first
/// failure of that stretch, and a failure at least `window` after it) is declared down for the rest of the run;
/// one success before that resets it. Pure and clock-free: instants are durations since any fixed origin the caller
/// chooses (a postgres-nio style state machine: feed it events, act on the state it returns).
public struct SourceHealth: Sendable, Hashable {
    public enum State: Sendable, Hashable {
        case up
        /// Declared down at `since` (the instant of the failure that completed the window); final for the run.
        case down(since: Duration)
    }

    /// What one request's outcome says about the source.
    public enum Outcome: Sendable, Hashable {
        /// The source answered (any status but 429 and 5xx: a 404 is an answer too).
        case success
        /// 429, 5xx, no answer (timeout, network error, a lookup cut off by its deadline).
        case failure
    }

    /// "A whole minute".
    public static let defaultWindow = Duration.seconds(60)

    public let window: Duration
    public private(set) var state: State = .up
    /// Start of the current stretch of failures (its earliest failure); nil after a success (or before any outcome).
    public private(set) var failingSince: Duration?
    /// The latest failure of the current stretch; nil after a success (or before any outcome).
    public private(set) var lastFailure: Duration?
    /// Failures in the current stretch.
    public private(set) var failures = 0
    /// The HTTP status of the stretch's last failure (nil: no answer at all).
    public private(set) var lastStatus: Int?

    public init(window: Duration = SourceHealth.defaultWindow) {
        self.window = max(window, .zero)
    }

    /// The outcome of an attempt that got `status` (nil: no HTTP answer).
    public static func outcome(status: Int?) -> Outcome {
        guard let status else { return .failure }
        return status == 429 || (500...599).contains(status) ? .failure : .success
    }

    /// Records one request's outcome at `now`; returns the state after it.
    @discardableResult
    public mutating func record(_ outcome: Outcome, status: Int? = nil, at now: Duration) -> State {
        guard state == .up else { return state }
        switch outcome {
        case .success:
            failingSince = nil
            lastFailure = nil
            failures = 0
            lastStatus = nil
        case .failure:
            failingSince = min(failingSince ?? now, now)
            lastFailure = max(lastFailure ?? now, now)
            failures += 1
            lastStatus = status
            if failingSpan ?? .zero >= window { state = .down(since: now) }
        }
        return state
    }

    public var isDown: Bool { state != .up }

    /// How long the current stretch of failures has lasted, from its first failure to its latest (nil: not failing).
    /// Only this span declares a source down; a wait the source asks for (a `429`'s `Retry-After`, a backoff) never
    /// does, however long: the source is paused for it and asked again (CONTRACT "Hostile answers and bounded work").
    public var failingSpan: Duration? {
        guard let failingSince, let lastFailure else { return nil }
        return lastFailure - failingSince
    }

    /// Operator text for a source declared down: "no answer but 429/5xx/timeouts for 60 s (12 failures, the last
    /// HTTP 503)".
    public var reason: String {
        let last = lastStatus.map { "the last HTTP \($0)" } ?? "the last without an HTTP answer"
        return "no answer but 429/5xx/timeouts for \(Self.format(window)) s (\(failures) failures, \(last))"
    }

    private static func format(_ duration: Duration) -> String {
        let parts = duration.components
        let seconds = Double(parts.seconds) + Double(parts.attoseconds) / 1e18
        return seconds == seconds.rounded() ? String(Int64(seconds)) : String(seconds)
    }
}
