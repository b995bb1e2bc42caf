import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import SubreconCore

/// One successful answer of `GET /v1/subscribers/{id}`.
public struct RevenueCatFetchResult: Sendable, Hashable {
    /// 200 (found) or 201 (created by this very request).
    public var status: Int
    public var response: RevenueCatSubscriberResponse
    /// HTTP attempts it took, first try included.
    public var attempts: Int
}

/// Client for RevenueCat's v1 `GET /v1/subscribers/{app_user_id}`.
///
/// Retries 5xx, network errors and timeouts (at most `maxAttempts` tries) with exponential backoff and full jitter;
/// honours 429 waits without counting them as attempts (bounded by `max429Wait` per wait and `rateLimitBudget` in
/// total); never retries other 4xx. Does not send `X-Platform` (it would touch `last_seen`). The caller owns the
/// `HTTPClient`. Never logs or reports the API key.
public struct RevenueCatClient: Sendable {
    /// The name given to `RequestObserver`.
    public static let sourceName = "revenuecat"

    private let httpClient: HTTPClient
    private let configuration: RevenueCatConfiguration
    private let logger: Logger
    private let observer: (any RequestObserver)?
    private let gate: (any RequestGate)?

    public init(
        httpClient: HTTPClient, configuration: RevenueCatConfiguration, logger: Logger,
        observer: (any RequestObserver)? = nil, gate: (any RequestGate)? = nil
    ) {
        self.httpClient = httpClient
        self.configuration = configuration
        self.logger = logger
        self.observer = observer
        self.gate = gate
    }

    /// What RevenueCat says about `appUserID`. Never throws: a failure becomes `SourceFacts.failed` with an
    /// operator-readable message.
    public func facts(for appUserID: String) async -> SourceFacts {
        do {
            let result = try await subscriber(appUserID)
            return result.response.sourceFacts(status: result.status)
        } catch {
            let message = (error as? RevenueCatError)?.description ?? "unexpected error"
            logger.debug(
                "revenuecat fetch failed",
                metadata: ["user.id": "\(appUserID)", "error.message": "\(message)"])
            return .failed(SourceError(origin: .revenueCat, kind: .fetch, message: message))
        }
    }

    /// Fetches (and, as RevenueCat does, creates if unknown) the subscriber. Throws `RevenueCatError`.
    public func subscriber(_ appUserID: String) async throws -> RevenueCatFetchResult {
        let base = configuration.baseURL.hasSuffix("/") ? String(configuration.baseURL.dropLast()) : configuration.baseURL
        let url = base + Self.subscriberPath(for: appUserID)
        guard URL(string: url) != nil else { throw RevenueCatError.invalidURL }
        var request = HTTPClientRequest(url: url)
        request.method = .GET
        request.headers.add(name: "Authorization", value: "Bearer \(configuration.apiKey)")
        request.headers.add(name: "Accept", value: "application/json")

        var attempt = 0
        var failures = 0  // 5xx, timeouts, network errors: bounded by maxAttempts
        var rateLimited = RateLimitChain(budget: configuration.rateLimitBudget)  // 429s: bounded by time, not attempts
        while true {
            attempt += 1
            if let gate {
                do { try await gate.acquire() } catch { throw RevenueCatError.cancelled }
            }
            let outcome = await perform(request)
            let retried = attempt > 1
            let wait: Duration
            switch outcome {
            case .answer(let status, let headers, let body):
                observer?.requestFinished(source: Self.sourceName, status: status, retried: retried)
                switch status {
                case 200, 201:
                    return RevenueCatFetchResult(status: status, response: try decode(body), attempts: attempt)
                case 429:
                    let errorBody = try? JSONDecoder().decode(RevenueCatErrorBody.self, from: body)
                    let asked = RetryPolicy.rateLimitWait(
                        backoffMS: errorBody?.backoffMS, retryAfter: headers.first(name: "retry-after"), now: Date(),
                        cap: configuration.max429Wait)
                    // Every 429 lowers the shared rate; a granted wait also pauses everybody for it.
                    switch rateLimited.next(asked, ownBackoff: { backoff(failures: $0) }) {
                    case .wait(let duration):
                        wait = duration
                        await gate?.backOff(for: duration)
                    case .tooLong(let seconds):
                        await gate?.backOff(for: .zero)
                        throw RevenueCatError.rateLimitWaitTooLong(seconds: seconds, cap: configuration.max429Wait, attempts: attempt)
                    case .budgetSpent:
                        await gate?.backOff(for: .zero)
                        throw RevenueCatError.rateLimited(attempts: attempt)
                    }
                case 500...599:
                    failures += 1
                    guard failures < configuration.maxAttempts else { throw httpError(status, body, attempts: attempt) }
                    wait = backoff(failures: failures)
                default:
                    throw httpError(status, body, attempts: attempt)
                }
                logger.debug(
                    "revenuecat request will be retried",
                    metadata: ["user.id": "\(appUserID)", "http.status": "\(status)", "retry.attempt": "\(attempt)"])
            case .timedOut:
                observer?.requestFinished(source: Self.sourceName, status: nil, retried: retried)
                failures += 1
                guard failures < configuration.maxAttempts else { throw RevenueCatError.timedOut(attempts: attempt) }
                wait = backoff(failures: failures)
            case .network(let reason):
                observer?.requestFinished(source: Self.sourceName, status: nil, retried: retried)
                failures += 1
                guard failures < configuration.maxAttempts else {
                    throw RevenueCatError.network(reason, attempts: attempt)
                }
                wait = backoff(failures: failures)
                logger.debug(
                    "revenuecat request failed below HTTP, will be retried",
                    metadata: ["user.id": "\(appUserID)", "error.message": "\(reason)", "retry.attempt": "\(attempt)"])
            case .failed(let error):
                observer?.requestFinished(source: Self.sourceName, status: nil, retried: retried)
                throw error
            }
            do { try await Task.sleep(for: wait) } catch { throw RevenueCatError.cancelled }
        }
    }

    /// `/v1/subscribers/` followed by the id percent-encoded as a single path segment
    /// (only RFC 3986 unreserved characters stay as they are: `$RCAnonymousID:a` → `%24RCAnonymousID%3Aa`).
    public static func subscriberPath(for appUserID: String) -> String {
        "/v1/subscribers/" + (appUserID.addingPercentEncoding(withAllowedCharacters: unreserved) ?? "")
    }

    private static let unreserved = CharacterSet(
        charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

    // MARK: - One attempt

    private enum Outcome {
        case answer(status: Int, headers: HTTPHeaders, body: Data)
        case timedOut
        case network(String)
        case failed(RevenueCatError)
    }

    private func perform(_ request: HTTPClientRequest) async -> Outcome {
        do {
            // One deadline for the whole request, headers and body (a trickled body cannot hold it longer).
            let response = try await httpClient.collect(
                request, deadline: configuration.requestTimeout, maxBodyBytes: configuration.maxBodyBytes, logger: logger)
            return .answer(status: response.status, headers: response.headers, body: response.body)
        } catch is RequestDeadlineExceeded {
            if Task.isCancelled { return .failed(.cancelled) }
            return .timedOut
        } catch let error as HTTPClientError {
            if Task.isCancelled { return .failed(.cancelled) }
            switch error {
            case .deadlineExceeded, .readTimeout, .connectTimeout, .writeTimeout:
                return .timedOut
            default:
                return .network(redact(String(describing: error)))
            }
        } catch is NIOTooManyBytesError {
            return .failed(.bodyTooLarge(limit: configuration.maxBodyBytes))
        } catch is CancellationError {
            return .failed(.cancelled)
        } catch {
            if Task.isCancelled { return .failed(.cancelled) }
            return .network(redact(String(describing: error)))
        }
    }

    private func decode(_ body: Data) throws -> RevenueCatSubscriberResponse {
        do {
            return try RevenueCatSubscriberResponse.decode(body: body)
        } catch let error as DecodingError {
            throw RevenueCatError.malformedJSON(redact(Self.explain(error)))
        } catch {
            throw RevenueCatError.malformedJSON("unreadable body")
        }
    }

    private func httpError(_ status: Int, _ body: Data, attempts: Int) -> RevenueCatError {
        let errorBody = RevenueCatErrorBody.decode(body: body)
        return .http(
            status: status, code: errorBody?.code.map { redact(String($0.prefix(40))) },
            message: errorBody?.message.map { redact(String($0.prefix(200))) }, attempts: attempts)
    }

    private func backoff(failures: Int) -> Duration {
        let ceiling = RetryPolicy.ceiling(
            failures: failures, base: configuration.baseBackoff, max: configuration.maxBackoff)
        return RetryPolicy.jittered(ceiling, unit: Double.random(in: 0...1))
    }

    /// Removes the API key from text that came from elsewhere (server messages, error descriptions).
    private func redact(_ text: String) -> String {
        let key = configuration.apiKey
        guard !key.isEmpty else { return text }
        return text.replacingOccurrences(of: key, with: "<redacted>")
    }

    private static func explain(_ error: DecodingError) -> String {
        func path(_ context: DecodingError.Context) -> String {
            let keys = context.codingPath.map { $0.intValue.map(String.init) ?? $0.stringValue }
            return keys.isEmpty ? "" : " at " + keys.joined(separator: ".")
        }
        switch error {
        case .dataCorrupted(let context):
            return context.codingPath.isEmpty
                ? "not valid JSON" : "\(context.debugDescription)\(path(context))"
        case .keyNotFound(let key, let context):
            return "missing key '\(key.stringValue)'\(path(context))"
        case .typeMismatch(_, let context), .valueNotFound(_, let context):
            return "\(context.debugDescription)\(path(context))"
        @unknown default:
            return "undecodable body"
        }
    }
}
