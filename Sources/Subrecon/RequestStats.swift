import Synchronization

/// Requests made per source during a run, for `summary.json` and metrics. Thread-safe.
public final class RequestStats: Sendable {
    public struct Counts: Sendable, Hashable {
        public var requests = 0
        public var rateLimited = 0
        public var failures = 0
    }

    private let state = Mutex<[String: Counts]>([:])

    public init() {}

    /// Counts one HTTP attempt; `status` nil means no response (network error or timeout).
    public func record(source: String, status: Int?) {
        state.withLock { counts in
            var c = counts[source] ?? Counts()
            c.requests += 1
            if status == 429 { c.rateLimited += 1 }
            if status == nil || (status ?? 0) >= 500 { c.failures += 1 }
            counts[source] = c
        }
    }

    public var snapshot: [String: Counts] { state.withLock { $0 } }
}
