import AsyncHTTPClient
import Foundation
import Logging
import NIOHTTP1
import SourceHTTP
import SubreconCore

/// One successful answer of `GET /v1/subscribers/{id}`.
public struct RevenueCatFetchResult: Sendable, Hashable {
    /// 200 (found) or 201 (created by this very request).
    public var status: Int
    public var response: RevenueCatSubscriberResponse
    /// HTTP attempts it took, first try included.
    public var attempts: Int
}

/// Client for RevenueCat's v1 `GET /v1/subscribers/{app_user_id}`: builds the request, classifies the answer,
/// decodes; `SourceTransport` does the rest.
///
/// Retries 5xx, network errors and timeouts (at most `requestPolicy.maxAttempts` tries) with exponential backoff and full jitter;
/// honours 429 waits without counting them as attempts (bounded by the policy's `maxRateLimitWait` per wait and `rateLimitBudget` in
/// total); never retries other 4xx. Does not send `X-Platform` (it would touch `last_seen`). The caller owns the
/// `HTTPClient`. Never logs or reports the API key.
public struct RevenueCatClient: Sendable {
    /// The name given to the `RequestObserver`.
    public static let sourceName = "revenuecat"

    private let configuration: RevenueCatConfiguration
    private let logger: Logger
    private let transport: SourceTransport

    public init(
        httpClient: HTTPClient, configuration: RevenueCatConfiguration, logger: Logger,
        observer: (any RequestObserver)? = nil, gate: (any RequestGate)? = nil
    ) {
        self.configuration = configuration
        self.logger = logger
        self.transport = SourceTransport(
            source: Self.sourceName, httpClient: httpClient,
            policy: configuration.requestPolicy, observer: observer, gate: gate)
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
        var logger = self.logger
        logger[metadataKey: "user.id"] = "\(appUserID)"
        switch await transport.send(request, logger: logger, classify: classify) {
        case .success(let delivery):
            let answer = delivery.value
            return RevenueCatFetchResult(status: answer.status, response: try decode(answer.body), attempts: delivery.attempts)
        case .failure(let failure):
            throw revenueCatError(for: failure)
        }
    }

    /// 200 and 201 are answers; 429 waits what `backoff_ms` or `Retry-After` asks; 5xx is retried; the rest fails.
    private func classify(_ answer: SourceAnswer) -> AnswerClass<SourceAnswer> {
        switch answer.status {
        case 200, 201:
            return .success(answer)
        case 429:
            let errorBody = try? JSONDecoder().decode(RevenueCatErrorBody.self, from: answer.body)
            return .rateLimited(
                WaitHint.rateLimitWait(
                    backoffMS: errorBody?.backoffMS, retryAfter: answer.headers.first(name: "retry-after"), now: Date(),
                    cap: configuration.requestPolicy.maxRateLimitWait))
        case 500...599:
            return .retry(problem: "HTTP \(answer.status)")
        default:
            return .fail(reason: "HTTP \(answer.status)")
        }
    }

    private func revenueCatError(for failure: SourceRequestFailure) -> RevenueCatError {
        RevenueCatError(
            failure, waitCap: configuration.requestPolicy.maxRateLimitWait, httpError: { httpError($0, $1, attempts: $2) }, redact: redact)
    }

    /// `/v1/subscribers/` followed by the id percent-encoded as a single path segment
    /// (only RFC 3986 unreserved characters stay as they are: `$RCAnonymousID:a` → `%24RCAnonymousID%3Aa`).
    public static func subscriberPath(for appUserID: String) -> String {
        "/v1/subscribers/" + (appUserID.addingPercentEncoding(withAllowedCharacters: unreserved) ?? "")
    }

    private static let unreserved = CharacterSet(
        charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

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
