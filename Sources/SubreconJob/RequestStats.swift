import SourceHTTP
import SubreconReports
import Synchronization

/// Requests made per source during a run, for `summary.json` and metrics. Thread-safe.
public final class RequestStats: Sendable {
    private let state = Mutex<[String: RunSummary.SourceRequests]>([:])
    /// Judges from every attempt whether a source is down (nil: never declared down).
    public let health: SourceHealthBoard?

    public init(health: SourceHealthBoard? = nil) {
        self.health = health
    }

    /// Counts one HTTP attempt; `status` nil means no response (network error or timeout).
    public func record(source: String, status: Int?) {
        state.withLock { counts in
            var c = counts[source] ?? RunSummary.SourceRequests()
            c.requests += 1
            if status == 429 { c.rateLimited += 1 }
            if status == nil || (status ?? 0) >= 500 { c.failures += 1 }
            counts[source] = c
        }
        health?.record(source: source, status: status)
    }

    /// The counts so far, per source, in the summary's shape.
    public var snapshot: [String: RunSummary.SourceRequests] { state.withLock { $0 } }
}

extension RequestStats: RequestObserver {
    /// Every attempt of every source's `SourceTransport` is counted here.
    public func requestFinished(source: String, status: Int?, retried: Bool) {
        record(source: source, status: status)
    }

    /// A source declared down is not asked again this run.
    public func refusal(source: String) -> String? {
        health?.refusal(source: source)
    }

    /// A source whose failures would fill the health window during `wait` is declared down before it.
    public func refusal(source: String, afterWaiting wait: Duration) -> String? {
        health?.refusal(source: source, afterWaiting: wait)
    }
}
