/// Paces the requests of one source (its rate budget), shared by every worker of a run; nil means unpaced.
///
/// The job's `SharedRateLimiter` is the production gate (one per source); `SourceTransport` asks it before every
/// attempt and tells it about every 429.
public protocol RequestGate: Sendable {
    /// Waits until one more request may be sent. Throwing abandons the request (e.g. on cancellation).
    func acquire() async throws
    /// Like `acquire()`, but throws `DeadlineRefusal` at once, sending nothing, when the request could not go
    /// within `limit` (the time left of the lookup's deadline, `LookupDeadline`): a source's 429 pause or a slowed
    /// rate never holds a lookup past its deadline. The default waits as `acquire()` does.
    func acquire(within limit: Duration) async throws
    /// The source answered 429: lower the shared rate (AIMD), and, when `duration` is above zero, let nobody send
    /// for that long (the wait this lookup was granted). `.zero` is the lookup giving up on a 429 (a wait too long
    /// or its 429 budget spent), or a source saying its budget is nearly spent: the rate still drops, but nobody is
    /// paused.
    func backOff(for duration: Duration) async
}

extension RequestGate {
    public func acquire(within limit: Duration) async throws { try await acquire() }
}

/// Told about every HTTP attempt a source makes (the run summary's per-source request counts and metrics).
public protocol RequestObserver: Sendable {
    /// Called once per attempt sent. `status` is nil when no HTTP answer came (network error, timeout, a body
    /// over the limit, cancellation); `retried` is true when this attempt was itself a retry of an earlier one
    /// of the same lookup.
    func requestFinished(source: String, status: Int?, retried: Bool)
    /// Why `source` must not be asked at all any more (it was declared down for the rest of the run), or nil.
    /// Asked before every attempt; a refusal ends the lookup as `.sourceDown` without sending anything.
    func refusal(source: String) -> String?
    /// Why `source` must not be asked again after waiting `wait` (a backoff, a 429's wait): it is down already
    /// (declared by another lookup's failures), so the wait would be for nothing. A wait never declares a source
    /// down by itself, however long: the source is paused for it and asked again (CONTRACT "Hostile answers and
    /// bounded work"). nil: the wait may go ahead.
    func refusal(source: String, afterWaiting wait: Duration) -> String?
}

extension RequestObserver {
    public func refusal(source: String) -> String? { nil }
    public func refusal(source: String, afterWaiting wait: Duration) -> String? { refusal(source: source) }
}
