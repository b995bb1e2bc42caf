/// Told about every HTTP attempt a client makes; the job uses it to count requests and 429s per source.
public protocol RequestObserver: Sendable {
    /// Called once per attempt. `status` is nil when no HTTP answer came (network error, timeout);
    /// `retried` is true when this attempt was itself a retry of an earlier one for the same request.
    func requestFinished(source: String, status: Int?, retried: Bool)
}

/// Paces requests to a source (rate limiting); nil means no pacing.
public protocol RequestGate: Sendable {
    /// Waits until one more request may be sent. Throwing abandons the request (e.g. on cancellation).
    func acquire() async throws
    /// The source answered 429 and asked for `duration` of quiet.
    func backOff(for duration: Duration) async
}
