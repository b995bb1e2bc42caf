import Crypto
import Foundation
import SubreconCore

/// The App Store Server API's `GET /inApps/v1/subscriptions/{transactionId}` on loopback.
///
/// Requires a valid ES256 bearer token signed by `apiPublicKey` with the expected `kid`, `iss`, `aud` and `bid`
/// (401 without a body otherwise) and signs its answers with `pki`. Paths: `/inApps/...` serves every scenario in
/// its own environment; `/production/inApps/...` and `/sandbox/inApps/...` serve only that environment's
/// scenarios (others get 404 / 4040010), so a client can be pointed at two distinct base URLs.
public struct AppStoreSimulator: SimulatorRoute {
    public let pki: AppleTestPKI
    public let issuerID: String
    public let keyID: String
    public let bundleID: String
    public let appAppleID: Int64
    let apiPublicKey: P256.Signing.PublicKey
    let forger: AppleTestPKI
    let state: AppStoreSimulatorState
    let now: @Sendable () -> Date
    let signingNow: @Sendable () -> Date

    /// - Parameters:
    ///   - now: the real clock, for API tokens and `Retry-After`.
    ///   - signedAt: the simulated store's own "now", written as `signedDate` into what it signs (its statuses are
    ///     true at that instant); nil: `now`.
    public init(
        pki: AppleTestPKI, apiPublicKey: P256.Signing.PublicKey, issuerID: String, keyID: String, bundleID: String,
        appAppleID: Int64 = 1_234_567_890, scenarios: [AppStoreScenario] = [], now: @escaping @Sendable () -> Date = { Date() },
        signedAt: (@Sendable () -> Date)? = nil
    ) throws {
        self.pki = pki
        self.apiPublicKey = apiPublicKey
        self.issuerID = issuerID
        self.keyID = keyID
        self.bundleID = bundleID
        self.appAppleID = appAppleID
        self.forger = try AppleTestPKI.generate(now: now(), name: "forged")
        self.state = AppStoreSimulatorState(scenarios: scenarios)
        self.now = now
        self.signingNow = signedAt ?? now
    }

    /// Adds or replaces a scenario.
    public func setScenario(_ scenario: AppStoreScenario) async { await state.set(scenario) }
    /// Sets (or clears, with nil) the fault for a transaction id.
    public func setFault(_ fault: AppStoreFault?, for transactionID: String) async { await state.setFault(fault, for: transactionID) }
    /// The decoded header and claims of the last request's bearer token.
    public func lastToken() async -> AppStoreRecordedToken? { await state.lastToken }
    /// Requests received for `transactionID` (any environment, any outcome).
    public func requestCount(for transactionID: String) async -> Int { await state.counts[transactionID, default: 0] }
    /// All requests received.
    public func totalRequests() async -> Int { await state.counts.values.reduce(0, +) }
    /// Requests received per transaction id.
    public func requestCounts() async -> [String: Int] { await state.counts }
    /// 429 answers given by the global rate limit or a fault.
    public func rateLimitedAnswers() async -> Int { await state.rateLimited }
    /// Latency added to every answer.
    public func setLatency(_ latency: Duration) async { await state.setLatency(latency) }
    /// A global limit in requests per second (token bucket, burst = one second's worth); nil removes it.
    /// Over the limit the answer is 429 with `Retry-After` the absolute Unix time in ms of the next token.
    public func setRequestsPerSecond(_ rate: Double?) async { await state.setRate(rate) }
    /// Forgets the request counts.
    public func resetCounters() async { await state.resetCounters() }

    public func handle(_ request: SimulatorRequest) async -> SimulatorResponse? {
        var segments = request.pathSegments
        var only: StoreEnvironment?
        if let first = segments.first, let environment = StoreEnvironment(rawValue: first) {
            only = environment
            segments.removeFirst()
        }
        if request.method == "GET", segments.count == 4, segments[0] == "inApps", segments[1] == "v2", segments[2] == "history" {
            return await history(request, id: segments[3], only: only)
        }
        guard request.method == "GET", segments.count == 4, segments[0] == "inApps", segments[1] == "v1",
            segments[2] == "subscriptions"
        else { return nil }
        let id = segments[3]
        await state.count(id)
        let token = AppStoreBearerToken.check(
            request.headers["authorization"], key: apiPublicKey, keyID: keyID, issuerID: issuerID, bundleID: bundleID,
            now: now())
        await state.record(token)
        guard token.accepted else { return SimulatorResponse(status: 401) }
        if let wait = await state.takeToken() {
            var response = errorResponse(429, code: 4_290_000, message: "Rate limit exceeded.")
            let retryAt = now().addingTimeInterval(Double(wait / .microseconds(1)) / 1_000_000)
            response.headers["retry-after"] = String(retryAt.unixMilliseconds + 1)
            return response
        }

        var delay = await state.latency
        var trickle: Duration?
        switch await faultAnswer(for: id) {
        case .answer(let response): return response
        case .delay(let wait): delay += wait
        case .trickle(let pause): trickle = pause
        case .none: break
        }
        let fault = await state.fault(for: id)
        guard let scenario = await state.scenario(for: id), only == nil || only == scenario.environment else {
            return errorResponse(404, code: 4_040_010, message: "Transaction id not found.")
        }
        do {
            var body = try statusBody(for: scenario, fault: fault)
            body.delay = delay
            body.trickle = trickle
            return body
        } catch {
            return errorResponse(500, code: 5_000_000, message: "An unknown error occurred.")
        }
    }

    /// What a scripted fault does to this request.
    enum FaultEffect {
        case answer(SimulatorResponse)
        case delay(Duration)
        case trickle(Duration)
        case none
    }

    func faultAnswer(for id: String) async -> FaultEffect {
        switch await state.takeFault(for: id) {
        case .raw(let status, let headers, let body, _)?:
            var response = SimulatorResponse.json(status, body)
            for (name, value) in headers { response.headers[name.lowercased()] = value }
            return .answer(response)
        case .trickle(let pause)?:
            return .trickle(pause)
        case .error(let status, let code, _)?:
            guard let code else { return .answer(SimulatorResponse(status: status)) }
            return .answer(errorResponse(status, code: code, message: "Simulated error."))
        case .rateLimited(let after, _)?:
            await state.countRateLimited()
            var response = errorResponse(429, code: 4_290_000, message: "Rate limit exceeded.")
            let retryAt = now().addingTimeInterval(Double(after / .milliseconds(1)) / 1000)
            response.headers["retry-after"] = String(retryAt.unixMilliseconds)
            return .answer(response)
        case .malformedBody?:
            return .answer(.json(200, Data(#"{"environment":"Production","data":[{"lastTransactions":"#.utf8)))
        case .delay(let wait)?:
            return .delay(wait)
        case .forgedSignature?, .tamperedPayload?, nil:
            return .none
        }
    }

    func errorResponse(_ status: Int, code: Int, message: String) -> SimulatorResponse {
        .json(status, encoding: ["errorCode": "\(code)", "errorMessage": message].jsonObject(numericKeys: ["errorCode"]))
    }

    private func statusBody(for scenario: AppStoreScenario, fault: AppStoreFault?) throws -> SimulatorResponse {
        let signedAt = signingNow().unixMilliseconds
        let transaction = SimulatedTransactionPayload(
            originalTransactionId: scenario.originalTransactionID, transactionId: scenario.transactionID,
            bundleId: scenario.bundleID ?? bundleID, productId: scenario.productID,
            subscriptionGroupIdentifier: scenario.subscriptionGroupIdentifier,
            purchaseDate: scenario.purchaseDate.unixMilliseconds, originalPurchaseDate: scenario.purchaseDate.unixMilliseconds,
            expiresDate: scenario.expiresDate.unixMilliseconds,
            inAppOwnershipType: scenario.ownershipType, offerType: scenario.offerType,
            offerDiscountType: scenario.offerDiscountType, signedDate: signedAt,
            revocationDate: scenario.revocationDate?.unixMilliseconds,
            revocationReason: scenario.revocationDate == nil ? nil : (scenario.revocationReason ?? 0),
            environment: scenario.environmentName, price: scenario.price, currency: scenario.price == nil ? nil : scenario.currency,
            appAccountToken: scenario.appAccountToken)
        let renewal = SimulatedRenewalPayload(
            originalTransactionId: scenario.originalTransactionID, autoRenewProductId: scenario.productID,
            productId: scenario.productID, autoRenewStatus: scenario.autoRenew ? 1 : 0,
            isInBillingRetryPeriod: scenario.isInBillingRetryPeriod,
            gracePeriodExpiresDate: scenario.gracePeriodExpiresDate?.unixMilliseconds, signedDate: signedAt,
            environment: scenario.environmentName, renewalPrice: scenario.renewalPrice ?? scenario.price,
            currency: (scenario.renewalPrice ?? scenario.price) == nil ? nil : scenario.currency,
            expirationIntent: scenario.status == 2 ? (scenario.autoRenew ? 2 : 1) : nil)
        var signedTransaction: String
        switch fault {
        case .forgedSignature?:
            signedTransaction = try forger.sign(payload: transaction)
        case .tamperedPayload?:
            signedTransaction = try pki.sign(payload: transaction)
            var changed = transaction
            changed.expiresDate += 365 * 86_400_000
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            signedTransaction = AppleTestPKI.tamper(signedTransaction, payloadJSON: try encoder.encode(changed))
        default:
            signedTransaction = try pki.sign(payload: transaction)
        }
        var item: [String: Any] = [
            "status": scenario.status,
            "originalTransactionId": scenario.originalTransactionID,
            "signedTransactionInfo": signedTransaction,
        ]
        if !scenario.omitsRenewalInfo { item["signedRenewalInfo"] = try pki.sign(payload: renewal) }
        let body: [String: Any] = [
            "environment": scenario.environmentName,
            "bundleId": bundleID,
            "appAppleId": appAppleID,
            "data": [["subscriptionGroupIdentifier": scenario.subscriptionGroupIdentifier, "lastTransactions": [item]]],
        ]
        return .json(200, try JSONSerialization.data(withJSONObject: body, options: [.sortedKeys]))
    }
}

/// The simulator's mutable state.
actor AppStoreSimulatorState {
    private var scenarios: [String: AppStoreScenario] = [:]
    private var faults: [String: (fault: AppStoreFault, remaining: Int)] = [:]
    private(set) var counts: [String: Int] = [:]
    private(set) var lastToken: AppStoreRecordedToken?
    private(set) var latency: Duration = .zero
    private(set) var rateLimited = 0
    private var bucket: TokenBucket?
    /// Non-consumable purchases (`AppleNonConsumableScenario`) and the history requests per id.
    var nonConsumables: [AppleNonConsumableScenario] = []
    var historyCounts: [String: Int] = [:]

    init(scenarios: [AppStoreScenario]) {
        for scenario in scenarios { self.scenarios[scenario.originalTransactionID] = scenario }
    }

    func set(_ scenario: AppStoreScenario) { scenarios[scenario.originalTransactionID] = scenario }

    /// By original transaction id, or by the latest transaction id.
    func scenario(for id: String) -> AppStoreScenario? {
        scenarios[id] ?? scenarios.values.first { $0.transactionID == id }
    }

    func setFault(_ fault: AppStoreFault?, for id: String) {
        guard let fault else {
            faults[id] = nil
            return
        }
        let times: Int =
            switch fault {
            case .error(_, _, let times), .rateLimited(_, let times), .raw(_, _, _, let times): times
            default: Int.max
            }
        faults[id] = (fault, times)
    }

    /// The fault for this request, consuming one use of a counted fault.
    func takeFault(for id: String) -> AppStoreFault? {
        guard let entry = faults[id], entry.remaining > 0 else { return nil }
        if entry.remaining != Int.max { faults[id] = (entry.fault, entry.remaining - 1) }
        return entry.fault
    }

    /// The standing fault (signature faults), without consuming it.
    func fault(for id: String) -> AppStoreFault? { faults[id]?.fault }

    func count(_ id: String) { counts[id, default: 0] += 1 }
    func setLatency(_ latency: Duration) { self.latency = latency }
    func setRate(_ rate: Double?) { bucket = rate.map { TokenBucket(rate: $0, now: ContinuousClock.now) } }
    func countRateLimited() { rateLimited += 1 }
    func resetCounters() {
        counts = [:]
        rateLimited = 0
    }

    /// Nil when the request may be answered; else how long until the rate limit has a token (counted as a 429).
    func takeToken() -> Duration? {
        guard var limiter = bucket else { return nil }
        let wait = limiter.take(now: ContinuousClock.now)
        bucket = limiter
        if wait != nil { rateLimited += 1 }
        return wait
    }
    func record(_ token: AppStoreRecordedToken) { lastToken = token }
}

extension Dictionary where Key == String, Value == String {
    /// A JSON object with the given keys written as numbers.
    fileprivate func jsonObject(numericKeys: Set<String>) -> AppStoreJSON {
        AppStoreJSON(fields: self, numericKeys: numericKeys)
    }
}

/// A flat JSON object of strings and integers (error bodies).
struct AppStoreJSON: Encodable {
    var fields: [String: String]
    var numericKeys: Set<String>

    func encode(to encoder: any Encoder) throws {
        struct Key: CodingKey {
            var stringValue: String
            var intValue: Int? { nil }
            init(stringValue: String) { self.stringValue = stringValue }
            init?(intValue: Int) { nil }
        }
        var container = encoder.container(keyedBy: Key.self)
        for (name, value) in fields {
            if numericKeys.contains(name), let number = Int(value) {
                try container.encode(number, forKey: Key(stringValue: name))
            } else {
                try container.encode(value, forKey: Key(stringValue: name))
            }
        }
    }
}
