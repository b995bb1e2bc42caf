import Crypto
import Foundation
import SubreconCore
import _CryptoExtras

/// Google's OAuth token endpoint, `purchases.subscriptionsv2.get` and `purchases.voidedpurchases.list` on loopback
/// (reference/revenuecat.md §4).
///
/// The token endpoint (`POST tokenPath`, form-encoded `grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer&
/// assertion=…`) verifies the JWT's RS256 signature with the service account's public key and its claims (`iss`,
/// `aud` naming this endpoint's path, `scope`, `iat`/`exp` within an hour and not expired), and issues access
/// tokens with `expires_in`. The API checks the bearer token (401 with Google's error body when missing, unknown
/// or expired; `expireAccessTokens()` expires every token issued, to test the refresh), answers purchases set by
/// tests, 404 for tokens it does not know and for another package, 410 for tokens set gone, and scripted faults;
/// the voided purchases set by tests (`addVoided`), filtered and paged as Google does.
public actor GooglePlaySimulator: SimulatorRoute {
    public static let jwtBearer = "urn:ietf:params:oauth:grant-type:jwt-bearer"
    public nonisolated let packageName: String
    public nonisolated let tokenPath: String
    private let clientEmail: String
    private let publicKey: _RSA.Signing.PublicKey
    private let now: @Sendable () -> Date
    private var purchases: [String: SimulatedPlaySubscription] = [:]
    /// One-time product purchases by `productKey(product:token:)`.
    var products: [String: SimulatedPlayProduct] = [:]
    private var gone: Set<String> = []
    private var faults: [String: [(fault: GooglePlayFault, remaining: Int?)]] = [:]
    private var tokenFaults: [(status: Int, remaining: Int)] = []
    /// Every token request answers 429 with this `Retry-After` (nil: off).
    private var tokenRetryAfter: String?
    /// Every request (token, API, voided purchases) answers this status (nil: off): Google down.
    private var downStatus: Int?
    private var accessTokens: [String: Date] = [:]
    private var expiresIn = 3599
    private var tally = GooglePlaySimulatorCounters()
    private var voided: [SimulatedVoidedPurchase] = []
    private var voidedPageSize = 1000
    private var voidedQueries: [[String: String]] = []
    /// How the API refuses a valid access token (nil: the service account is granted the app).
    private var accessDenial: GooglePlayAccessDenial?
    private static let voidedFaultKey = "\u{0}voidedpurchases"

    public init(
        account: GoogleTestServiceAccount, packageName: String, tokenPath: String = "/token",
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.clientEmail = account.clientEmail
        self.publicKey = account.publicKey
        self.packageName = packageName
        self.tokenPath = tokenPath
        self.now = now
    }

    // MARK: - Set-up

    public func setPurchase(_ purchase: SimulatedPlaySubscription, token: String) { purchases[token] = purchase }
    /// The token answers 410 Gone (expired too long ago to be queried).
    public func setGone(_ token: String) { gone.insert(token) }
    func isGone(_ token: String) -> Bool { gone.contains(token) }
    /// Queues `fault` for `token` for the next `times` requests (nil: forever).
    public func setFault(_ fault: GooglePlayFault, token: String, times: Int? = nil) {
        faults[token, default: []].append((fault, times))
    }
    /// Drops the faults queued for `token`: it answers normally again.
    public func clearFaults(token: String) { faults[token] = nil }
    /// The token endpoint answers `status` (with an OAuth error body) for the next `times` requests.
    public func setTokenEndpointFault(status: Int, times: Int) { tokenFaults.append((status, times)) }
    /// The token endpoint answers 429 with `Retry-After: retryAfter` to every request from now on (nil: stops).
    public func setTokenEndpointRateLimited(retryAfter: String?) { tokenRetryAfter = retryAfter }
    /// Every request answers `status` (e.g. 503) from now on, counted in `counters().downAnswers`; nil: up again.
    public func setDown(status: Int?) { downStatus = status }
    /// `expires_in` of the tokens issued from now on.
    public func setExpiresIn(_ seconds: Int) { expiresIn = seconds }
    /// Every access token issued so far stops working (the API answers 401 until a new one is fetched).
    public func expireAccessTokens() { accessTokens = [:] }
    public func counters() -> GooglePlaySimulatorCounters { tally }
    /// A voided purchase `voidedpurchases.list` reports (in its time order).
    public func addVoided(_ purchase: SimulatedVoidedPurchase) { voided.append(purchase) }
    /// Voided purchases a page holds at most (Google: `maxResults`, at most 1000); the smaller of the two is used.
    public func setVoidedPageSize(_ size: Int) { voidedPageSize = max(1, size) }
    /// Queues `fault` for the next `times` voided purchases requests (nil: forever).
    public func setVoidedFault(_ fault: GooglePlayFault, times: Int? = nil) {
        faults[Self.voidedFaultKey, default: []].append((fault, times))
    }
    /// From now on every API request with a valid access token is refused as `denial` says (nil: granted again);
    /// the token endpoint still issues tokens, as Google's does for an account Play Console has not granted.
    public func setAccessDenied(_ denial: GooglePlayAccessDenial?) { accessDenial = denial }
    /// The query of every voided purchases request that passed the bearer check, in order (percent-decoded).
    public func voidedRequestQueries() -> [[String: String]] { voidedQueries }

    // MARK: - Serving

    public func handle(_ request: SimulatorRequest) async -> SimulatorResponse? {
        if let downStatus {
            tally.downAnswers += 1
            return Self.error(downStatus, "Scripted outage", status: Self.statusName(downStatus))
        }
        if request.path == tokenPath, let tokenRetryAfter {
            tally.tokenRequests += 1
            return SimulatorResponse(
                status: 429, headers: ["content-type": "application/json", "retry-after": tokenRetryAfter],
                body: Data(#"{"error":"rate_limit_exceeded","error_description":"Quota exceeded"}"#.utf8))
        }
        if request.path == tokenPath { return token(request) }
        let segments = request.pathSegments
        if segments.count == 6, segments[0] == "androidpublisher", segments[1] == "v3", segments[2] == "applications",
            segments[4] == "purchases", segments[5] == "voidedpurchases"
        {
            return voidedPurchases(request, package: segments[3])
        }
        if segments.count == 9, segments[0] == "androidpublisher", segments[1] == "v3", segments[2] == "applications",
            segments[4] == "purchases", segments[5] == "products", segments[7] == "tokens"
        {
            tally.apiRequests += 1
            if request.method != "GET" { return Self.error(405, "Method not allowed", status: "INVALID_ARGUMENT") }
            return unauthorized(request) ?? productRoute(package: segments[3], product: segments[6], token: segments[8])
        }
        guard segments.count == 8, segments[0] == "androidpublisher", segments[1] == "v3", segments[2] == "applications",
            segments[4] == "purchases", segments[5] == "subscriptionsv2", segments[6] == "tokens"
        else { return nil }
        tally.apiRequests += 1
        guard request.method == "GET" else { return Self.error(405, "Method not allowed", status: "INVALID_ARGUMENT") }
        if let refused = unauthorized(request) { return refused }
        let token = segments[7]
        if let scripted = scriptedFault(key: token, malformed: "{\"kind\": \"androidpub", { answer(package: segments[3], token: token) }) {
            return scripted
        }
        return answer(package: segments[3], token: token)
    }

    /// `GET …/applications/{package}/purchases/voidedpurchases`: the bearer check, scripted faults, then Google's
    /// filters: `type` (0, the default: one-time products only; 1: subscriptions too), `startTime`/`endTime` in
    /// Unix ms on the voided time (both inclusive; defaults: 30 days before the end, and now), pages of
    /// `maxResults` (at most 1000, and at most `setVoidedPageSize`) continued by `token`. A start more than 30
    /// days before the end, a start after the end, an end in the future, or an unknown token or type is a 400
    /// (the simulator measures Google's 30 days from `endTime`, not from its clock, so tests may pin a past as-of).
    private func voidedPurchases(_ request: SimulatorRequest, package: String) -> SimulatorResponse {
        tally.voidedRequests += 1
        guard request.method == "GET" else { return Self.error(405, "Method not allowed", status: "INVALID_ARGUMENT") }
        if let refused = unauthorized(request) { return refused }
        voidedQueries.append(request.query)
        if let scripted = scriptedFault(
            key: Self.voidedFaultKey, malformed: "{\"voidedPurchases\": [{\"purch", { voidedPage(request.query, package: package) })
        {
            return scripted
        }
        return voidedPage(request.query, package: package)
    }

    private func voidedPage(_ query: [String: String], package: String) -> SimulatorResponse {
        guard package == packageName else {
            return Self.error(
                404, "No application was found for the given package name.", status: "NOT_FOUND", reason: "applicationNotFound")
        }
        let invalid = { (message: String) in Self.error(400, message, status: "INVALID_ARGUMENT", reason: "invalid") }
        let nowMillis = Int64((now().timeIntervalSince1970 * 1000).rounded(.down))
        let thirtyDays: Int64 = 30 * 86_400_000
        guard let type = Int(query["type"] ?? "0"), type == 0 || type == 1 else { return invalid("Invalid value for type.") }
        let end: Int64
        if let text = query["endTime"] {
            guard let value = Int64(text) else { return invalid("Invalid value for endTime.") }
            end = value
        } else {
            end = nowMillis
        }
        let start: Int64
        if let text = query["startTime"] {
            guard let value = Int64(text) else { return invalid("Invalid value for startTime.") }
            start = value
        } else {
            start = end - thirtyDays
        }
        guard end <= nowMillis else { return invalid("endTime cannot be in the future.") }
        guard start <= end else { return invalid("startTime must be before endTime.") }
        guard start >= end - thirtyDays else { return invalid("startTime cannot be older than 30 days.") }
        guard let maxResults = Int(query["maxResults"] ?? "1000"), maxResults > 0 else { return invalid("Invalid value for maxResults.") }
        var offset = 0
        if let token = query["token"] {
            guard token.hasPrefix("vp-"), let value = Int(token.dropFirst(3)), value >= 0 else {
                return invalid("Invalid pagination token.")
            }
            offset = value
        }
        let matching = voided.filter { purchase in
            let voidedAt = Int64((purchase.voidedTime.timeIntervalSince1970 * 1000).rounded(.down))
            return (type == 1 || !purchase.isSubscription) && voidedAt >= start && voidedAt <= end
        }
        let size = min(maxResults, 1000, voidedPageSize)
        let page = Array(matching.dropFirst(offset).prefix(size))
        var object: [String: Any] = [
            "pageInfo": ["totalResults": matching.count, "resultPerPage": size, "startIndex": offset]
        ]
        if !page.isEmpty { object["voidedPurchases"] = page.map(\.json) }
        if offset + page.count < matching.count {
            object["tokenPagination"] = ["nextPageToken": "vp-\(offset + page.count)"]
        }
        return .json(200, (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data())
    }

    private func answer(package: String, token: String) -> SimulatorResponse {
        guard package == packageName else {
            return Self.error(
                404, "No application was found for the given package name.", status: "NOT_FOUND", reason: "applicationNotFound")
        }
        if gone.contains(token) {
            return Self.error(
                410, "The subscription purchase is no longer available for query because it has been expired for too long.",
                status: "GONE", reason: "subscriptionPurchaseNoLongerAvailable")
        }
        guard let purchase = purchases[token] else {
            return Self.error(404, "The purchase token was not found.", status: "NOT_FOUND", reason: "purchaseTokenNotFound")
        }
        return .json(200, purchase.jsonBody())
    }

    /// A 401 unless the request carries an access token this simulator issued and has not expired.
    func unauthorized(_ request: SimulatorRequest) -> SimulatorResponse? {
        let bearer = request.headers["authorization"].flatMap { $0.hasPrefix("Bearer ") ? String($0.dropFirst(7)) : nil }
        if let bearer, let expiry = accessTokens[bearer], expiry > now() { return accessDenial?.response }
        tally.unauthorized += 1
        return Self.error(
            401, "Request had invalid authentication credentials. Expected OAuth 2 access token.", status: "UNAUTHENTICATED")
    }

    /// The answer of the next scripted fault for `key`, or nil (answer normally): `malformed` is the truncated body a
    /// malformed answer sends, `normal` the answer a trickle sends byte by byte.
    func scriptedFault(key: String, malformed: String, _ normal: () -> SimulatorResponse) -> SimulatorResponse? {
        guard let fault = nextFault(key) else { return nil }
        switch fault {
        case .status(let status):
            if status == 401 { tally.unauthorized += 1 }
            return Self.error(status, "Scripted failure", status: Self.statusName(status))
        case .rateLimited(let retryAfter):
            var response = Self.error(429, "Quota exceeded", status: "RESOURCE_EXHAUSTED")
            if let retryAfter { response.headers["retry-after"] = retryAfter }
            return response
        case .malformedJSON:
            return SimulatorResponse(status: 200, headers: ["content-type": "application/json"], body: Data(malformed.utf8))
        case .raw(let status, let headers, let body):
            return SimulatorResponse(status: status, headers: headers, body: body)
        case .trickle(let pause):
            var response = normal()
            response.trickle = pause
            return response
        }
    }

    private func nextFault(_ token: String) -> GooglePlayFault? {
        guard var queue = faults[token], !queue.isEmpty else { return nil }
        let fault = queue[0].fault
        if let remaining = queue[0].remaining {
            if remaining <= 1 { queue.removeFirst() } else { queue[0].remaining = remaining - 1 }
        }
        faults[token] = queue
        return fault
    }

    private func token(_ request: SimulatorRequest) -> SimulatorResponse {
        tally.tokenRequests += 1
        if !tokenFaults.isEmpty {
            let status = tokenFaults[0].status
            tokenFaults[0].remaining -= 1
            if tokenFaults[0].remaining <= 0 { tokenFaults.removeFirst() }
            return .json(status, Data(#"{"error":"internal_failure","error_description":"Scripted failure"}"#.utf8))
        }
        guard request.method == "POST" else { return refuse("invalid_request", "POST required") }
        var form: [String: String] = [:]
        for pair in String(decoding: request.body, as: UTF8.self).split(separator: "&") {
            let kv = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let decode = { (text: Substring) in String(text).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? "" }
            form[decode(kv[0])] = kv.count > 1 ? decode(kv[1]) : ""
        }
        guard form["grant_type"] == Self.jwtBearer else { return refuse("unsupported_grant_type", "Invalid grant_type") }
        guard let assertion = form["assertion"] else { return refuse("invalid_request", "Missing required parameter: assertion") }
        if let problem = verify(assertion) { return refuse("invalid_grant", problem) }
        let access = "ya29.sim-" + UUID().uuidString
        accessTokens[access] = now().addingTimeInterval(TimeInterval(expiresIn))
        tally.tokensIssued += 1
        let body = #"{"access_token":"\#(access)","expires_in":\#(expiresIn),"token_type":"Bearer"}"#
        return .json(200, Data(body.utf8))
    }

    private func refuse(_ code: String, _ description: String) -> SimulatorResponse {
        tally.assertionsRefused += 1
        let object = ["error": code, "error_description": description]
        return .json(400, (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data())
    }

    /// nil when the assertion is a valid RS256 JWT of the service account for this endpoint; else the problem.
    private func verify(_ assertion: String) -> String? {
        let parts = assertion.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerData = Base64URL.decode(parts[0]), let claimsData = Base64URL.decode(parts[1]),
            let signature = Base64URL.decode(parts[2])
        else { return "Invalid JWT: not three base64url parts" }
        guard let header = (try? JSONSerialization.jsonObject(with: headerData)) as? [String: Any],
            header["alg"] as? String == "RS256", header["typ"] as? String == "JWT"
        else { return "Invalid JWT header" }
        let signingInput = Data((parts[0] + "." + parts[1]).utf8)
        guard
            publicKey.isValidSignature(
                _RSA.Signing.RSASignature(rawRepresentation: signature), for: SHA256.hash(data: signingInput), padding: .insecurePKCS1v1_5)
        else { return "Invalid JWT Signature." }
        guard let claims = (try? JSONSerialization.jsonObject(with: claimsData)) as? [String: Any] else { return "Invalid JWT claims" }
        guard claims["iss"] as? String == clientEmail else { return "Invalid issuer" }
        guard let audience = claims["aud"] as? String, URL(string: audience)?.path == tokenPath else { return "Invalid audience" }
        guard let scope = claims["scope"] as? String,
            scope.split(separator: " ").contains("https://www.googleapis.com/auth/androidpublisher")
        else { return "Invalid scope" }
        guard let iat = (claims["iat"] as? NSNumber)?.doubleValue, let exp = (claims["exp"] as? NSNumber)?.doubleValue else {
            return "Missing iat or exp"
        }
        let current = now().timeIntervalSince1970
        guard exp > current else { return "Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe" }
        guard exp - iat <= 3600, iat <= current + 300 else {
            return "Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe"
        }
        return nil
    }
}
