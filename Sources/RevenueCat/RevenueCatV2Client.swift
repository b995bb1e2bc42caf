import AsyncHTTPClient
import Foundation
import Logging
import NIOHTTP1
import SourceHTTP
import SubreconCore

/// What v2 says about a customer id: RevenueCat knows it (200, a customer object), or it does not (404
/// `resource_missing`).
public enum RevenueCatV2Existence: Sendable, Hashable {
    case exists
    case missing
}

/// Client for RevenueCat's API v2 reads that create nothing: `GET /v2/projects/{project_id}/customers/{customer_id}`
/// (does this customer exist?) and, for `doctor`, `GET /v2/projects/{project_id}/customers?limit=1`.
///
/// Its requests are their own source (`revenuecat_v2`): their own rate gate, counts and health. A 429 waits the body's
/// `backoff_ms`, else `Retry-After` (seconds), under the same bounds as every source (`SourceTransport`); 5xx,
/// timeouts and network errors are retried; everything that is not exactly a 200 customer or a 404
/// `resource_missing` is an error, never "no customer". Never logs or reports the key.
public struct RevenueCatV2Client: Sendable {
    /// The name given to the `RequestObserver`: v2 requests are counted apart from v1's.
    public static let sourceName = "revenuecat_v2"

    public let configuration: RevenueCatV2Configuration
    private let logger: Logger
    private let transport: SourceTransport
    private let gate: (any RequestGate)?

    public init(
        httpClient: HTTPClient, configuration: RevenueCatV2Configuration, logger: Logger,
        observer: (any RequestObserver)? = nil, gate: (any RequestGate)? = nil
    ) {
        self.configuration = configuration
        self.logger = logger
        self.gate = gate
        self.transport = SourceTransport(
            source: Self.sourceName, httpClient: httpClient, policy: configuration.requestPolicy, observer: observer, gate: gate)
    }

    /// Whether RevenueCat knows `customerID`. Throws `RevenueCatError` for every other answer.
    public func existence(of customerID: String) async throws(RevenueCatError) -> RevenueCatV2Existence {
        let answer = try await get(Self.customerPath(project: configuration.projectID, customerID: customerID), userID: customerID)
        switch answer.status {
        case 200:
            do {
                _ = try RevenueCatV2Customer.decode(body: answer.body)
            } catch {
                throw RevenueCatError.malformedJSON("not RevenueCat's v2 customer object")
            }
            return .exists
        default:
            guard let body = RevenueCatV2ErrorBody.decode(body: answer.body), body.type == RevenueCatV2ErrorBody.resourceMissing,
                !(body.message ?? "").lowercased().contains("project")
            else { throw httpError(answer.status, answer.body, attempts: 1) }
            return .missing
        }
    }

    /// One page of at most `limit` customers (`doctor`'s read of the key: it creates nothing).
    public func listCustomers(limit: Int = 1) async throws(RevenueCatError) -> RevenueCatV2ListPage {
        let path = Self.projectPath(configuration.projectID) + "/customers?limit=\(limit)"
        let answer = try await get(path, userID: nil)
        guard answer.status == 200 else { throw httpError(answer.status, answer.body, attempts: 1) }
        do {
            return try RevenueCatV2ListPage.decode(body: answer.body)
        } catch {
            throw RevenueCatError.malformedJSON("not RevenueCat's v2 list object")
        }
    }

    /// `/v2/projects/{project_id}`, the project id percent-encoded as one path segment.
    public static func projectPath(_ projectID: String) -> String {
        "/v2/projects/" + (projectID.addingPercentEncoding(withAllowedCharacters: unreserved) ?? "")
    }

    /// `/v2/projects/{project_id}/customers/{customer_id}`, each id percent-encoded as one path segment (only RFC 3986
    /// unreserved characters stay: `$RCAnonymousID:a` → `%24RCAnonymousID%3Aa`, `a/b` → `a%2Fb`).
    public static func customerPath(project: String, customerID: String) -> String {
        projectPath(project) + "/customers/" + (customerID.addingPercentEncoding(withAllowedCharacters: unreserved) ?? "")
    }

    private static let unreserved = CharacterSet(
        charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

    /// A GET whose 200 and 404 are answers to read; 429 waits, 5xx retries, the rest fails.
    func get(_ path: String, userID: String?) async throws(RevenueCatError) -> SourceAnswer {
        let base = configuration.baseURL.hasSuffix("/") ? String(configuration.baseURL.dropLast()) : configuration.baseURL
        guard URL(string: base + path) != nil else { throw RevenueCatError.invalidURL }
        var request = HTTPClientRequest(url: base + path)
        request.method = .GET
        request.headers.add(name: "Authorization", value: "Bearer \(configuration.apiKey)")
        request.headers.add(name: "Accept", value: "application/json")
        var logger = self.logger
        if let userID { logger[metadataKey: "user.id"] = "\(userID)" }
        switch await transport.send(request, logger: logger, classify: classify) {
        case .success(let delivery):
            // The key's budget nearly spent (CONTRACT "Hostile answers and bounded work"): slow down before a 429.
            if RevenueCatV2RateLimit(delivery.value.headers)?.isNearlySpent == true { await gate?.backOff(for: .zero) }
            return delivery.value
        case .failure(let failure):
            throw error(for: failure)
        }
    }

    private func classify(_ answer: SourceAnswer) -> AnswerClass<SourceAnswer> {
        switch answer.status {
        case 200, 404:
            return .success(answer)
        case 429:
            let body = RevenueCatV2ErrorBody.decode(body: answer.body)
            return .rateLimited(
                WaitHint.rateLimitWait(
                    backoffMS: body?.backoffMS, retryAfter: answer.headers.first(name: "retry-after"), now: Date(),
                    cap: configuration.requestPolicy.maxRateLimitWait))
        case 500...599:
            return .retry(problem: "HTTP \(answer.status)")
        default:
            return .fail(reason: "HTTP \(answer.status)")
        }
    }

    private func error(for failure: SourceRequestFailure) -> RevenueCatError {
        RevenueCatError(
            failure, waitCap: configuration.requestPolicy.maxRateLimitWait, httpError: { httpError($0, $1, attempts: $2) }, redact: redact)
    }

    /// The error for a v2 answer: its `type` as the code, its message cut short and without the key.
    private func httpError(_ status: Int, _ body: Data, attempts: Int) -> RevenueCatError {
        let errorBody = RevenueCatV2ErrorBody.decode(body: body)
        return .http(
            status: status, code: errorBody.map { redact(String($0.type.prefix(40))) },
            message: errorBody?.message.map { redact(String($0.prefix(200))) }, attempts: attempts)
    }

    private func redact(_ text: String) -> String {
        let key = configuration.apiKey
        guard !key.isEmpty else { return text }
        return text.replacingOccurrences(of: key, with: "<redacted>")
    }
}
