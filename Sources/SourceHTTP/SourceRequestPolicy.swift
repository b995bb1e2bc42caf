import SubreconCore

/// How hard one source's lookups try: the whole-request deadline, the body limit, the attempts for transient
/// failures and their backoff, and the time bounds of 429 waits.
public struct SourceRequestPolicy: Sendable, Hashable {
    /// Time one attempt (head and body) may take.
    public var requestTimeout: Duration
    /// Largest response body accepted; a larger one fails the lookup at once (not retried).
    public var maxBodyBytes: Int
    /// Attempts per lookup for transient failures (5xx, network errors, timeouts, what the source calls
    /// retryable), first try included; at least 1. 429 answers do not count.
    public var maxAttempts: Int
    /// First backoff ceiling after a transient failure; doubles per failure, full jitter.
    public var baseBackoff: Duration
    /// Upper bound of one backoff ceiling.
    public var maxBackoff: Duration
    /// Longest wait a 429 may ask for: a longer one gives the lookup up for this run, never a sleep that long.
    /// The source's classification judges the asked wait against it (`RequestedWait`).
    public var maxRateLimitWait: Duration
    /// Total time one lookup may spend waiting on 429s (`RateLimitChain`).
    public var rateLimitBudget: Duration

    /// The defaults are the production defaults of every source (`SUBRECON_HTTP_*`, README "Configuration"); each
    /// source's configuration sets its own body limit.
    public init(
        requestTimeout: Duration = .seconds(10), maxBodyBytes: Int = 4 * 1024 * 1024, maxAttempts: Int = 4,
        baseBackoff: Duration = .milliseconds(500), maxBackoff: Duration = .seconds(30),
        maxRateLimitWait: Duration = .seconds(60), rateLimitBudget: Duration = .seconds(300)
    ) {
        self.requestTimeout = requestTimeout
        self.maxBodyBytes = max(0, maxBodyBytes)
        self.maxAttempts = max(1, maxAttempts)
        self.baseBackoff = baseBackoff
        self.maxBackoff = maxBackoff
        self.maxRateLimitWait = maxRateLimitWait
        self.rateLimitBudget = rateLimitBudget
    }
}

extension SourceRequestPolicy {
    /// The same policy with another body limit (each source knows how large its answers may be).
    public func limitingBodies(to bytes: Int) -> SourceRequestPolicy {
        var policy = self
        policy.maxBodyBytes = max(0, bytes)
        return policy
    }
}

/// What a source makes of one HTTP answer: the only source-specific input of `SourceTransport`'s retry loop.
public enum AnswerClass<Value: Sendable>: Sendable {
    /// The lookup is answered: `value` is handed back (e.g. the body to decode, or a decoded value).
    case success(Value)
    /// Transient (a 5xx, or an error the source calls retryable): retried with backoff while attempts remain;
    /// `problem` names it in the "gave up" failure.
    case retry(problem: String)
    /// A 429: wait what the source asked (judged against the cap), bounded by the lookup's 429 budget, then ask
    /// again; not counted as an attempt.
    case rateLimited(RequestedWait)
    /// Final: no retry. `reason` is the operator text.
    case fail(reason: String)
}

/// What went wrong in the last transient failure of a lookup.
public enum TransientProblem: Sendable, CustomStringConvertible {
    /// An answer the source classified `.retry(problem:)`.
    case answer(SourceAnswer, problem: String)
    /// No complete answer (head and body) within the request timeout.
    case timedOut
    /// Below HTTP: connection refused or reset, DNS, TLS, ... (the error's own description).
    case network(String)

    public var description: String {
        switch self {
        case .answer(_, let problem): problem
        case .timedOut: "timed out"
        case .network(let reason): "network error (\(reason))"
        }
    }
}

/// Why a lookup through `SourceTransport` ended without an answer. `description` is operator text a new source
/// can use as it is (it never contains request headers, so no keys or tokens); the existing clients map these
/// cases to their own error types and wording.
public enum SourceRequestFailure: Error, Sendable, CustomStringConvertible {
    /// The classification said `.fail(reason:)` for this answer.
    case rejected(SourceAnswer, reason: String, attempts: Int)
    /// Transient failures used up `maxAttempts`; `last` is the last of them.
    case exhausted(last: TransientProblem, attempts: Int)
    /// A 429 asked for more than `cap` (`seconds` may be infinite): given up for this run.
    case rateLimitWaitTooLong(seconds: Double, cap: Duration, answer: SourceAnswer, attempts: Int)
    /// One more 429 wait would exceed the lookup's 429 budget: given up for this run.
    case rateLimitBudgetSpent(answer: SourceAnswer, attempts: Int)
    /// The body was larger than `limit` bytes (not retried).
    case bodyTooLarge(limit: Int, attempts: Int)
    /// The gate refused the request (it throws on cancellation).
    case notPermitted(String)
    /// The request could not be built for an attempt (e.g. a token could not be signed).
    case requestNotBuilt(String)
    /// A wait (backoff, a 429's asked wait, the rate gate) would have ended past the lookup's deadline
    /// (`LookupDeadline`), or no time was left for an attempt: given up for this run. `reason` is operator text.
    case beyondDeadline(String, attempts: Int)
    /// The source was declared down for the rest of the run (`RequestObserver.refusal(source:)`): not asked.
    case sourceDown(String, attempts: Int)
    /// The task was cancelled.
    case cancelled

    public var description: String {
        switch self {
        case .rejected(_, let reason, let attempts):
            reason + (attempts > 1 ? " after \(attempts) attempts" : "")
        case .exhausted(let last, let attempts):
            "gave up after \(attempts) attempts: \(last)"
        case .rateLimitWaitTooLong(let seconds, let cap, _, _):
            "rate limited (HTTP 429): the source " + RequestedWait.tooLongDescription(seconds: seconds, cap: cap)
                + "; retried on the next run"
        case .rateLimitBudgetSpent(_, let attempts):
            "rate limited (HTTP 429) until this lookup's wait budget ran out after \(attempts) attempts"
        case .bodyTooLarge(let limit, _):
            "response body larger than \(limit) bytes"
        case .notPermitted(let reason):
            "request not permitted: \(reason)"
        case .requestNotBuilt(let reason):
            "request could not be built: \(reason)"
        case .beyondDeadline(let reason, _), .sourceDown(let reason, _):
            reason
        case .cancelled:
            "cancelled"
        }
    }
}

/// A lookup's answer as the classification made it, and the attempts it took (first try included).
public struct SourceDelivery<Value: Sendable>: Sendable {
    public var value: Value
    public var attempts: Int
}
