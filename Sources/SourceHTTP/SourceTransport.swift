import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import SubreconCore

/// The one HTTP path of every source: rate gate, whole-request deadline, bounded body, retries, 429 waits,
/// observer and logger, around a source's own classification of each answer.
///
/// A lookup is: ask the gate → build the request → send it (head and body within `requestTimeout`, at most
/// `maxBodyBytes`, `logger` handed to AsyncHTTPClient) → tell the observer (once per attempt) → classify:
/// - `.success(value)`: done;
/// - `.retry` and timeouts and network errors: transient, retried after an exponential full-jitter backoff
///   (`Backoff`) until `maxAttempts` attempts were made, then `.exhausted`;
/// - `.rateLimited(asked)`: flow control, not counted as an attempt: the wait the source asked for (or the own
///   backoff when it named none; never below 50 ms) is granted while the lookup's 429 budget lasts
///   (`RateLimitChain`), and the gate is told (every 429 lowers the shared rate; a granted wait pauses everybody);
///   a wait over the cap is `.rateLimitWaitTooLong`, a spent budget `.rateLimitBudgetSpent`;
/// - `.fail(reason)`: final, `.rejected`.
/// A body over the limit fails at once; cancellation (of the task, the gate, or a sleep) ends the lookup as
/// `.cancelled` at the next step. Nothing here reads or logs request headers, so keys and tokens stay out of
/// failures and logs.
///
/// A new source therefore writes no retry code, only its request and its reading of an answer:
///
/// ```swift
/// let transport = SourceTransport(source: "stripe", httpClient: http, policy: policy, observer: stats, gate: gate)
/// let outcome = await transport.send(request, logger: logger) { answer in
///     switch answer.status {
///     case 200: .success(answer.body)
///     case 429: .rateLimited(.seconds(retryAfterSeconds(answer), cap: policy.maxRateLimitWait))
///     case 500...599: .retry(problem: "HTTP \(answer.status)")
///     default: .fail(reason: "HTTP \(answer.status)")
///     }
/// }
/// // .success(delivery): decode delivery.value; .failure(failure): a fetch error saying `failure.description`.
/// ```
public struct SourceTransport: Sendable {
    /// The source's name in observer calls and logs (`revenuecat`, `app_store`, ...).
    public let source: String
    public let policy: SourceRequestPolicy
    let httpClient: HTTPClient
    let observer: (any RequestObserver)?
    let gate: (any RequestGate)?
    let sleep: @Sendable (Duration) async throws -> Void

    /// - Parameters:
    ///   - httpClient: owned by the caller.
    ///   - gate: the source's shared rate limiter; nil: unpaced.
    ///   - sleep: how to wait between attempts (backoffs and 429 waits); `Task.sleep` by default, injected in tests.
    public init(
        source: String, httpClient: HTTPClient, policy: SourceRequestPolicy, observer: (any RequestObserver)? = nil,
        gate: (any RequestGate)? = nil,
        sleep: @escaping @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) }
    ) {
        self.source = source
        self.httpClient = httpClient
        self.policy = policy
        self.observer = observer
        self.gate = gate
        self.sleep = sleep
    }

    /// One lookup of the same `request` (with retries); see the type's documentation.
    public func send<Value: Sendable>(
        _ request: HTTPClientRequest, logger: Logger, classify: (SourceAnswer) -> AnswerClass<Value>
    ) async -> Result<SourceDelivery<Value>, SourceRequestFailure> {
        await send(logger: logger, request: { _ in request }, classify: classify)
    }

    /// One lookup whose request is built anew for every attempt (`attempt` is 1-based), e.g. to sign a fresh
    /// token; a build that throws ends the lookup as `.requestNotBuilt`.
    public func send<Value: Sendable>(
        logger: Logger, request makeRequest: (_ attempt: Int) async throws -> HTTPClientRequest,
        classify: (SourceAnswer) -> AnswerClass<Value>
    ) async -> Result<SourceDelivery<Value>, SourceRequestFailure> {
        var attempt = 0
        var failures = 0  // transient: bounded by maxAttempts
        var rateLimited = RateLimitChain(budget: policy.rateLimitBudget)  // 429s: bounded by time, not attempts
        while true {
            if Task.isCancelled { return .failure(.cancelled) }
            if let refused = await acquire(attempts: attempt) { return .failure(refused) }
            attempt += 1
            let request: HTTPClientRequest
            do { request = try await makeRequest(attempt) } catch { return .failure(.requestNotBuilt("\(error)")) }
            guard let timeout = attemptTimeout() else {
                return .failure(.beyondDeadline("no time left of this lookup's deadline; asked again next run", attempts: attempt - 1))
            }
            let outcome = await perform(request, timeout: timeout, logger: logger)
            observer?.requestFinished(source: source, status: outcome.status, retried: attempt > 1)
            let transient: TransientProblem
            switch outcome {
            case .cancelled:
                return .failure(.cancelled)
            case .bodyTooLarge:
                return .failure(.bodyTooLarge(limit: policy.maxBodyBytes, attempts: attempt))
            case .timedOut:
                transient = .timedOut
            case .network(let reason):
                transient = .network(reason)
            case .answer(let answer):
                switch classify(answer) {
                case .success(let value):
                    return .success(SourceDelivery(value: value, attempts: attempt))
                case .fail(let reason):
                    return .failure(.rejected(answer, reason: reason, attempts: attempt))
                case .retry(let problem):
                    transient = .answer(answer, problem: problem)
                case .rateLimited(let asked):
                    let step = rateLimited.next(asked, ownBackoff: backoff)
                    if let failed = await waitOut(step, answer: answer, attempt: attempt, logger: logger) { return .failure(failed) }
                    continue
                }
            }
            failures += 1
            guard failures < policy.maxAttempts else { return .failure(.exhausted(last: transient, attempts: attempt)) }
            let wait = backoff(failures: failures)
            if let refused = beyondDeadline("the backoff after \(transient)", wait, attempts: attempt) { return .failure(refused) }
            if let down = observer?.refusal(source: source, afterWaiting: wait) { return .failure(.sourceDown(down, attempts: attempt)) }
            log(logger, "source request failed, will be retried", attempt: attempt, status: outcome.status, wait: wait, problem: transient)
            guard await pause(wait) else { return .failure(.cancelled) }
        }
    }

    /// The backoff after `failures` transient failures (also the 429 wait when the source named none).
    func backoff(failures: Int) -> Duration {
        Backoff.wait(failures: failures, base: policy.baseBackoff, max: policy.maxBackoff)
    }

    /// One 429's step: waits it out (telling the gate) and returns nil to ask again, or the failure ending the lookup.
    private func waitOut(_ step: RateLimitChain.Step, answer: SourceAnswer, attempt: Int, logger: Logger) async -> SourceRequestFailure? {
        switch step {
        case .wait(let wait):
            await gate?.backOff(for: wait)
            if let refused = beyondDeadline("the source asked (HTTP 429) for a wait", wait, attempts: attempt) { return refused }
            if let down = observer?.refusal(source: source, afterWaiting: wait) { return .sourceDown(down, attempts: attempt) }
            log(logger, "source request rate limited, will be retried", attempt: attempt, status: 429, wait: wait)
            return await pause(wait) ? nil : .cancelled
        case .tooLong(let seconds):
            await gate?.backOff(for: .zero)
            return .rateLimitWaitTooLong(seconds: seconds, cap: policy.maxRateLimitWait, answer: answer, attempts: attempt)
        case .budgetSpent:
            await gate?.backOff(for: .zero)
            return .rateLimitBudgetSpent(answer: answer, attempts: attempt)
        }
    }

    /// Whether the next attempt may go: the source not declared down (the observer), and a slot from the gate within
    /// the time left of the lookup's deadline; the failure when refused.
    private func acquire(attempts: Int) async -> SourceRequestFailure? {
        if let refusal = observer?.refusal(source: source) { return .sourceDown(refusal, attempts: attempts) }
        guard let gate else { return nil }
        do {
            if let left = LookupDeadline.remaining() {
                try await gate.acquire(within: left)
            } else {
                try await gate.acquire()
            }
            return nil
        } catch let refusal as DeadlineRefusal {
            return .beyondDeadline(refusal.description, attempts: attempts)
        } catch {
            return Task.isCancelled ? .cancelled : .notPermitted("\(error)")
        }
    }

    /// The failure when `wait` would end past the lookup's deadline (nil: it fits, or there is no deadline).
    private func beyondDeadline(_ what: String, _ wait: Duration, attempts: Int) -> SourceRequestFailure? {
        guard let left = LookupDeadline.remaining(), wait > left else { return nil }
        return .beyondDeadline(DeadlineRefusal.wait(what, wait, left: left).description, attempts: attempts)
    }

    /// The time one attempt may take: the request timeout, or less when the deadline is nearer; nil: none left.
    private func attemptTimeout() -> Duration? {
        guard let left = LookupDeadline.remaining() else { return policy.requestTimeout }
        guard left > .milliseconds(1) else { return nil }
        return min(policy.requestTimeout, left)
    }

    /// Sleeps `wait`; false when cancelled (before or during the sleep).
    private func pause(_ wait: Duration) async -> Bool {
        do { try await sleep(wait) } catch { return false }
        return !Task.isCancelled
    }

    private func log(
        _ logger: Logger, _ message: Logger.Message, attempt: Int, status: Int?, wait: Duration,
        problem: TransientProblem? = nil
    ) {
        logger.debug(
            message,
            metadata: [
                "source": "\(source)", "http.status": "\(status.map(String.init) ?? "none")", "retry.attempt": "\(attempt)",
                "retry.wait": "\(wait)", "error.message": "\(problem?.description ?? "")",
            ])
    }

    // MARK: - One attempt

    enum Outcome {
        case answer(SourceAnswer)
        case timedOut
        case network(String)
        case bodyTooLarge
        case cancelled

        var status: Int? {
            if case .answer(let answer) = self { return answer.status }
            return nil
        }
    }

    func perform(_ request: HTTPClientRequest, timeout: Duration, logger: Logger) async -> Outcome {
        do {
            // One deadline for the whole request, headers and body (a trickled body cannot hold it longer).
            return .answer(
                try await httpClient.collect(request, deadline: timeout, maxBodyBytes: policy.maxBodyBytes, logger: logger))
        } catch {
            if Task.isCancelled || error is CancellationError { return .cancelled }
            switch error {
            case is RequestDeadlineExceeded:
                return .timedOut
            case is NIOTooManyBytesError:
                return .bodyTooLarge
            case let error as HTTPClientError:
                switch error {
                case .deadlineExceeded, .readTimeout, .connectTimeout, .writeTimeout: return .timedOut
                default: return .network(String(describing: error))
                }
            default:
                return .network(String(describing: error))
            }
        }
    }
}
