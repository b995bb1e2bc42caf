import AsyncHTTPClient
import Foundation
import Logging
import NIOHTTP1
import SourceHTTP
import SubreconCore

extension AppStoreClient {
    enum FetchOutcome: Sendable {
        case body(Data)
        /// 4040010: the id is unknown in this environment.
        case notFound
    }

    /// `GET /inApps/v1/subscriptions/{id}` in one environment, through `SourceTransport` (a fresh token per attempt).
    func fetchStatuses(transactionID: String, environment: StoreEnvironment) async -> Result<FetchOutcome, SourceError> {
        await fetch(
            url: configuration.baseURL(for: environment) + "/inApps/v1/subscriptions/" + Self.pathSegment(transactionID),
            environment: environment)
    }

    /// `id` percent-encoded as one path segment.
    static func pathSegment(_ id: String) -> String {
        var allowed = CharacterSet.urlPathAllowed
        allowed.remove("/")
        return id.addingPercentEncoding(withAllowedCharacters: allowed) ?? id
    }

    /// One authorized `GET url` in `environment`, classified by `classifyAnswer` (4040010: `.notFound`).
    func fetch(url: String, environment: StoreEnvironment) async -> Result<FetchOutcome, SourceError> {
        var logger = self.logger
        logger[metadataKey: "appstore.environment"] = "\(environment.rawValue)"
        let outcome = await transport.send(
            logger: logger,
            request: { _ in try await authorizedRequest(url: url, method: .GET) },
            classify: classifyAnswer)
        switch outcome {
        case .success(let delivery): return .success(delivery.value)
        case .failure(let failure): return .failure(fetchError(Self.message(for: failure)))
        }
    }

    /// A request to the App Store Server API under a fresh (cached) bearer token, asking for JSON; `json` is sent as
    /// the body with its content type.
    func authorizedRequest(url: String, method: HTTPMethod, json body: Data? = nil) async throws -> HTTPClientRequest {
        let token = try await tokens.token(now: now())
        var request = HTTPClientRequest(url: url)
        request.method = method
        request.headers.add(name: "Authorization", value: "Bearer " + token.value)
        request.headers.add(name: "Accept", value: "application/json")
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(body)
        }
        return request
    }

    /// 2xx is the body; 4040010 is "not in this environment"; 429 waits what `Retry-After` asks; 5xx and the
    /// retryable error codes are retried; 401 and everything else fails, naming the status and error code.
    func classifyAnswer(_ answer: SourceAnswer) -> AnswerClass<FetchOutcome> {
        let status = answer.status
        if (200..<300).contains(status) { return .success(.body(answer.body)) }
        if status == 401 {
            return .fail(
                reason: "HTTP 401: the API token was rejected; check APP_STORE_ISSUER_ID, APP_STORE_KEY_ID, "
                    + "APP_STORE_PRIVATE_KEY and APP_STORE_BUNDLE_ID")
        }
        let payload = try? AppStoreJSON.decode(AppStoreErrorPayload.self, from: answer.body)
        let code = payload?.errorCode
        if code == AppStoreErrorPayload.transactionIDNotFound { return .success(.notFound) }
        if status == 429 {
            return .rateLimited(
                Self.requestedWait(
                    retryAfter: answer.headers.first(name: "Retry-After"), now: now(),
                    cap: configuration.requestPolicy.maxRateLimitWait))
        }
        let named = Self.named(status: status, code: code)
        if status >= 500 || code.map(AppStoreErrorPayload.retryableCodes.contains) == true { return .retry(problem: named) }
        return .fail(reason: named + (payload?.errorMessage.map { ": \($0)" } ?? ""))
    }

    /// The operator text of a failed lookup (after "App Store Server API: ").
    static func message(for failure: SourceRequestFailure) -> String {
        switch failure {
        case .rejected(_, let reason, _):
            return reason
        case .exhausted(let last, let attempts):
            return "gave up after \(attempts) attempts: \(last)"
        case .rateLimitWaitTooLong(let seconds, let cap, let answer, _):
            return "rate limited (\(named(answer))): Apple " + RequestedWait.tooLongDescription(seconds: seconds, cap: cap)
                + " (Retry-After); retried on the next run"
        case .rateLimitBudgetSpent(let answer, let attempts):
            return "rate limited (\(named(answer))) until this lookup's wait budget ran out after \(attempts) attempts"
        case .requestNotBuilt:
            return "could not sign the API token"
        case .bodyTooLarge, .notPermitted, .beyondDeadline, .sourceDown, .cancelled:
            return failure.description
        }
    }

    /// "HTTP 429, error 4290000" (the error code when the body names one).
    private static func named(_ answer: SourceAnswer) -> String {
        named(status: answer.status, code: (try? AppStoreJSON.decode(AppStoreErrorPayload.self, from: answer.body))?.errorCode)
    }

    private static func named(status: Int, code: Int64?) -> String {
        code.map { "HTTP \(status), error \($0)" } ?? "HTTP \(status)"
    }

    /// What a 429's `Retry-After` asks for: an absolute Unix time in milliseconds (apple.md §1.9; an HTTP-date is
    /// read too), judged against `cap`. Never traps: `inf`, huge values and instants far ahead are `.tooLong`; an
    /// instant already past is a wait of zero; anything unreadable is `.unspecified` (the client's own backoff).
    static func requestedWait(retryAfter value: String?, now: Date, cap: Duration) -> RequestedWait {
        guard let value else { return .unspecified }
        if let milliseconds = WaitText.number(value) { return .untilUnixMilliseconds(milliseconds, now: now, cap: cap) }
        if let date = WaitText.httpDate(value) { return .until(date, now: now, cap: cap) }
        return .unspecified
    }
}
