import AsyncHTTPClient
import Foundation
import Logging
import NIOHTTP1
import SourceHTTP
import SubreconCore

/// Google Play Developer API client: `purchases.subscriptionsv2.get` → `StoreFact`s (CONTRACT "Sources and the decision").
///
/// Every request carries `Authorization: Bearer <access token>` from a service-account token cached for the run
/// (`GoogleAccessTokens`). Answers: 200 decoded and mapped; 404 absence (no facts); 410 evidence the purchase has
/// expired; 401 refreshes the token once and asks once more; 403 a fetch error (permissions); 429 waits what
/// `Retry-After` asks (capped) or its own backoff; 5xx and network errors retried with backoff; anything else, or
/// a body that does not decode or map, a fetch error. The caller owns the `HTTPClient`.
public struct GooglePlayClient: Sendable {
    /// The name used in observer calls and logs (the `sources` column's).
    public static let source = FactOrigin.googlePlay.rawValue

    public let configuration: GooglePlayConfiguration
    let logger: Logger
    let transport: SourceTransport
    public let tokens: GoogleAccessTokens
    /// The wall clock (the voided purchases' 30-day limit).
    let now: @Sendable () -> Date

    /// What Google said about one purchase token.
    public enum Lookup: Sendable, Hashable {
        case found(SubscriptionPurchaseV2)
        /// 404: Google does not know the token (absence, not evidence).
        case notFound
        /// 410: expired too long ago to be queried (evidence: expired).
        case gone
    }

    /// - Parameters:
    ///   - gate: the API's shared rate limiter (the token endpoint is not paced by it).
    ///   - now: the wall clock (assertion times, token reuse); injected in tests.
    ///   - sleep: how to wait between attempts; `Task.sleep` by default.
    public init(
        configuration: GooglePlayConfiguration, httpClient: HTTPClient, logger: Logger,
        observer: (any RequestObserver)? = nil, gate: (any RequestGate)? = nil,
        now: @escaping @Sendable () -> Date = { Date() },
        sleep: @escaping @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) }
    ) throws(GooglePlayConfigurationError) {
        self.configuration = configuration
        self.logger = logger
        self.now = now
        let policy = configuration.requestPolicy
        self.transport = SourceTransport(
            source: Self.source, httpClient: httpClient, policy: policy, observer: observer, gate: gate, sleep: sleep)
        let tokenTransport = SourceTransport(
            source: Self.source, httpClient: httpClient, policy: policy, observer: observer, gate: nil, sleep: sleep)
        let signer = try GoogleJWTSigner(serviceAccount: configuration.serviceAccount)
        self.tokens = GoogleAccessTokens(
            now: now, fetch: GoogleAccessTokens.exchange(signer: signer, transport: tokenTransport, logger: logger))
    }

    /// The URL of one purchase token's `subscriptionsv2` resource (the token percent-encoded as one segment).
    public func subscriptionURL(token: String) -> String {
        var allowed = CharacterSet.urlPathAllowed
        allowed.remove(charactersIn: "/?#%;")
        let encodedToken = token.addingPercentEncoding(withAllowedCharacters: allowed) ?? ""
        let encodedPackage = configuration.packageName.addingPercentEncoding(withAllowedCharacters: allowed) ?? ""
        return configuration.baseURL + "/androidpublisher/v3/applications/" + encodedPackage
            + "/purchases/subscriptionsv2/tokens/" + encodedToken
    }

    /// Google's store facts about purchase token `token`: empty when Google does not know it (404, absence); one
    /// expired fact of `productHint` (the row's product) when it answers 410.
    public func storeFacts(token: String, productHint: String?) async -> Result<[StoreFact], SourceError> {
        switch await subscription(token: token) {
        case .failure(let error): return .failure(error)
        case .success(.notFound): return .success([])
        case .success(.gone):
            return .success([GooglePlayMapping.expiredEvidence(token: token, productID: productHint ?? "")])
        case .success(.found(let purchase)):
            do {
                return .success(try GooglePlayMapping.storeFacts(purchase, token: token))
            } catch {
                return .failure(fetchError(error.description))
            }
        }
    }

    /// `GET …/purchases/subscriptionsv2/tokens/{token}`; a 401 refreshes the access token once and asks again.
    public func subscription(token: String) async -> Result<Lookup, SourceError> {
        guard !token.isEmpty else { return .failure(fetchError("empty purchase token")) }
        switch await authorizedGet(url: subscriptionURL(token: token), what: nil, classify: classify) {
        case .failure(let error): return .failure(error)
        case .success(.lookup(let lookup)): return .success(lookup)
        case .success(.body(let body)):
            guard let purchase = try? GoogleJSON.subscription(body) else { return .failure(fetchError("malformed subscription body")) }
            return .success(.found(purchase))
        }
    }

    /// One authorized `GET`: `classify` answers nil for a 401, which refreshes the access token once and asks again;
    /// 429 and 5xx go through the transport's waits and retries. `what` prefixes the error text.
    func authorizedGet<Value: Sendable>(
        url: String, what: String?, classify: @escaping @Sendable (SourceAnswer) -> AnswerClass<Value?>
    ) async -> Result<Value, SourceError> {
        let prefix = what.map { "\($0): " } ?? ""
        for round in 1...2 {
            let access: GoogleAccessToken
            do {
                access = try await tokens.token()
            } catch {
                return .failure(fetchError("OAuth token endpoint: \((error as? GoogleTokenError)?.description ?? "request failed")"))
            }
            let outcome = await transport.send(
                logger: logger, request: { _ in Self.authorizedGET(url, access) }, classify: classify)
            switch outcome {
            case .success(let delivery):
                guard let value = delivery.value else {
                    await tokens.invalidate(access.value)
                    if round == 2 {
                        return .failure(
                            fetchError(
                                prefix
                                    + "HTTP 401 with a fresh access token: check GOOGLE_PLAY_SERVICE_ACCOUNT and the service account's Play Console access"
                            ))
                    }
                    logger.debug("google play access token refused, refreshing once", metadata: ["source": "\(Self.source)"])
                    continue
                }
                return .success(value)
            case .failure(let failure):
                return .failure(fetchError(prefix + failure.description))
            }
        }
        return .failure(fetchError(prefix + "HTTP 401"))
    }

    enum Answer: Sendable {
        case body(Data)
        case lookup(Lookup)
    }

    /// 200: the body; 404 absence (unless another app's); 410 gone; 401: nil (refresh and ask again).
    @Sendable func classify(_ answer: SourceAnswer) -> AnswerClass<Answer?> {
        switch answer.status {
        case 200: return .success(.body(answer.body))
        case 404:
            // Google's 404 for another app is a configuration problem, not the token's absence.
            if GoogleJSON.error(answer.body)?.error?.errors?.contains(where: { $0.reason == "applicationNotFound" }) == true {
                return .fail(reason: "HTTP 404 (applicationNotFound): check GOOGLE_PLAY_PACKAGE_NAME")
            }
            return .success(.lookup(.notFound))
        case 410: return .success(.lookup(.gone))
        case 401: return .success(nil)
        case 403:
            return .fail(
                reason: Self.named(answer)
                    + ": the service account may not read this app's purchases (Play Console → API access, package name)")
        case 429: return .rateLimited(Self.requestedWait(answer, cap: transport.policy.maxRateLimitWait))
        case 500...599: return .retry(problem: Self.named(answer))
        default: return .fail(reason: Self.named(answer))
        }
    }

    /// "HTTP 403 (PERMISSION_DENIED)": the status and Google's error status when the body names one.
    /// A GET of `url` with the access token, asking for JSON.
    static func authorizedGET(_ url: String, _ access: GoogleAccessToken) -> HTTPClientRequest {
        var request = HTTPClientRequest(url: url)
        request.method = .GET
        request.headers.add(name: "Authorization", value: "Bearer " + access.value)
        request.headers.add(name: "Accept", value: "application/json")
        return request
    }

    static func named(_ answer: SourceAnswer) -> String {
        let status = GoogleJSON.error(answer.body)?.error?.status.map { String($0.prefix(40)) }
        return "HTTP \(answer.status)" + (status.map { " (\($0))" } ?? "")
    }

    /// What a 429's `Retry-After` asks: delta seconds or an HTTP-date, judged against `cap`; absent or unreadable
    /// is `.unspecified` (the transport's own backoff). Never traps.
    static func requestedWait(_ answer: SourceAnswer, cap: Duration, now: Date = Date()) -> RequestedWait {
        guard let value = answer.headers.first(name: "Retry-After") else { return .unspecified }
        if let seconds = WaitText.number(value) { return .seconds(seconds, cap: cap) }
        if let date = WaitText.httpDate(value) { return .until(date, now: now, cap: cap) }
        return .unspecified
    }

    func fetchError(_ message: String) -> SourceError {
        SourceError(origin: .googlePlay, kind: .fetch, message: "Google Play Developer API: " + message)
    }
}
