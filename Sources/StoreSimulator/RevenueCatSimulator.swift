import Foundation

/// What the simulated RevenueCat has answered since the last reset.
public struct RevenueCatSimulatorCounters: Sendable, Hashable {
    /// Every request to `/v1/subscribers/...`, rejected ones included.
    public var totalRequests = 0
    /// Requests per (decoded) app user id.
    public var requestsPerUser: [String: Int] = [:]
    /// 429 answers of any cause (faults, the global rate limit, concurrent requests for one user).
    public var rateLimitedAnswers = 0
    /// Requests that arrived while another request for the same user was still being answered.
    public var concurrentSameUserRequests = 0
    /// Customers v1's get-or-create created (a 201 answer): what a night with API v2 configured must leave at 0.
    public var customersCreated = 0
    /// Every request to `/v2/...`, rejected ones included (they are not in `totalRequests`).
    public var v2Requests = 0
    public init() {}
}

/// One request as the simulator saw it, for assertions on headers.
public struct RevenueCatRecordedRequest: Sendable, Hashable {
    public var appUserID: String
    /// Header names lower-cased.
    public var headers: [String: String]
}

/// RevenueCat's `GET /v1/subscribers/{app_user_id}` on loopback, with scripted faults.
///
/// Like RevenueCat, a GET for an unknown id creates the customer (201, empty) and from then on it exists (200).
/// Checks `Authorization: Bearer <apiKey>`. Not a model of RevenueCat's business logic: it reports what it was given.
public actor RevenueCatSimulator: SimulatorRoute {
    /// The key requests must carry.
    public let apiKey: String
    var subscribers: [String: SimulatedSubscriber] = [:]
    private var productEntitlements: [String: String]
    private var faults: [String: [(fault: RevenueCatFault, remaining: Int?)]] = [:]
    private var clock: Date?
    private var latency: Duration = .zero
    private var rejectConcurrent = true
    private var bucket: TokenBucket?
    private var inFlight: [String: Int] = [:]
    var counters = RevenueCatSimulatorCounters()
    /// API v2 as `setV2` configured it (`RevenueCatSimulator+V2`).
    var v2: RevenueCatV2SimulatorSettings?
    private var recorded: [RevenueCatRecordedRequest] = []
    private static let recordLimit = 256

    /// - Parameter productEntitlements: product id → entitlement identifier, used for subscribers given without
    ///   explicit entitlements.
    public init(apiKey: String, productEntitlements: [String: String] = [:]) {
        self.apiKey = apiKey
        self.productEntitlements = productEntitlements
    }

    // MARK: - Set-up

    public func setSubscriber(_ subscriber: SimulatedSubscriber, for appUserID: String) {
        subscribers[appUserID] = subscriber
    }

    public func removeSubscriber(_ appUserID: String) { subscribers[appUserID] = nil }

    public func subscriber(_ appUserID: String) -> SimulatedSubscriber? { subscribers[appUserID] }

    public func setProductEntitlements(_ map: [String: String]) { productEntitlements = map }

    /// Queues `fault` for `appUserID` for the next `times` requests (nil: forever). Faults queued for one user
    /// apply in order.
    public func setFault(_ fault: RevenueCatFault, for appUserID: String, times: Int? = nil) {
        faults[appUserID, default: []].append((fault, times))
    }

    public func clearFaults() { faults = [:] }

    /// The `request_date` to report; nil uses the current time.
    public func setClock(_ now: Date?) { clock = now }

    /// Latency added to every answer.
    public func setLatency(_ latency: Duration) { self.latency = latency }

    /// Whether a request for a user who already has one in flight is answered 429 (RevenueCat does). Default on.
    public func setRejectsConcurrentRequests(_ reject: Bool) { rejectConcurrent = reject }

    /// A global limit in requests per second (token bucket, burst = one second's worth); nil removes it.
    public func setRequestsPerSecond(_ rate: Double?) {
        bucket = rate.map { TokenBucket(rate: $0, now: ContinuousClock.now) }
    }

    // MARK: - Observation

    public func counters(reset: Bool = false) -> RevenueCatSimulatorCounters {
        let current = counters
        if reset { resetCounters() }
        return current
    }

    public func resetCounters() {
        counters = RevenueCatSimulatorCounters()
        recorded = []
    }

    /// The latest requests (at most 256), oldest first.
    public func recordedRequests() -> [RevenueCatRecordedRequest] { recorded }

    /// Requests for `appUserID` being answered now (inside their latency): what a test of overlapping requests waits on.
    public func inFlightRequests(for appUserID: String) -> Int { inFlight[appUserID, default: 0] }

    // MARK: - Serving

    public func handle(_ request: SimulatorRequest) async -> SimulatorResponse? {
        let segments = request.pathSegments
        if segments.first == "v2" { return await handleV2(request) }
        guard segments.count == 3, segments[0] == "v1", segments[1] == "subscribers" else { return nil }
        let userID = segments[2]
        counters.totalRequests += 1
        counters.requestsPerUser[userID, default: 0] += 1
        recorded.append(RevenueCatRecordedRequest(appUserID: userID, headers: request.headers))
        if recorded.count > Self.recordLimit { recorded.removeFirst(recorded.count - Self.recordLimit) }

        guard request.method == "GET" else { return error(405, code: 7226, "Method not allowed") }
        guard request.headers["authorization"] == "Bearer \(apiKey)" else {
            return error(401, code: 7225, "Invalid API key")
        }
        if var limiter = bucket {
            let wait = limiter.take(now: ContinuousClock.now)
            bucket = limiter
            if let wait {
                let millis = Int((Double(wait.components.seconds) + Double(wait.components.attoseconds) / 1e18) * 1000)
                return rateLimited(backoffMS: max(millis, 1), retryAfter: String(max(1, (millis + 999) / 1000)))
            }
        }
        if inFlight[userID, default: 0] > 0 {
            counters.concurrentSameUserRequests += 1
            if rejectConcurrent {
                counters.rateLimitedAnswers += 1
                return .json(
                    429,
                    Data(#"{"code":7638,"message":"There is already another request in flight for this subscriber."}"#.utf8))
            }
        }

        let fault = takeFault(for: userID)
        var wait = latency
        if case .delay(let extra) = fault { wait += extra }
        if wait > .zero {
            inFlight[userID, default: 0] += 1
            try? await Task.sleep(for: wait)
            inFlight[userID, default: 1] -= 1
            if inFlight[userID] == 0 { inFlight[userID] = nil }
        }

        switch fault {
        case .status(let status):
            return error(status, code: status >= 500 ? 7110 : 7226, "Simulated failure (HTTP \(status))")
        case .rateLimited(let backoffMS, let retryAfter):
            return rateLimited(backoffMS: backoffMS, retryAfter: retryAfter)
        case .malformedJSON:
            return .json(200, Data(#"{"request_date": "2026-03-01T02:00:05Z", "subscriber": {"entitlements": [tru"#.utf8))
        case .raw(let status, let headers, let body):
            var response = SimulatorResponse.json(status, body)
            for (name, value) in headers { response.headers[name.lowercased()] = value }
            return response
        case .trickle(let pause):
            var response = answer(for: userID)
            response.trickle = pause
            return response
        case .delay, nil:
            return answer(for: userID)
        }
    }

    private func answer(for userID: String) -> SimulatorResponse {
        let now = clock ?? Date()
        let status: Int
        let subscriber: SimulatedSubscriber
        if let known = subscribers[userID] {
            status = 200
            subscriber = known
        } else {
            status = 201
            counters.customersCreated += 1
            subscriber = SimulatedSubscriber(originalAppUserID: userID, firstSeen: now)
            subscribers[userID] = subscriber
        }
        let body = RevenueCatWireSubscriberResponse(
            requestDate: now, subscriber: subscriber, appUserID: userID,
            entitlements: subscriber.resolvedEntitlements(productEntitlements: productEntitlements))
        return .json(status, encoding: body)
    }

    private func takeFault(for userID: String) -> RevenueCatFault? {
        guard var queue = faults[userID], !queue.isEmpty else { return nil }
        let fault = queue[0].fault
        if let remaining = queue[0].remaining {
            if remaining <= 1 { queue.removeFirst() } else { queue[0].remaining = remaining - 1 }
        }
        faults[userID] = queue.isEmpty ? nil : queue
        return fault
    }

    private func error(_ status: Int, code: Int, _ message: String) -> SimulatorResponse {
        let body = try? JSONSerialization.data(withJSONObject: ["code": code, "message": message], options: [.sortedKeys])
        return .json(status, body ?? Data())
    }

    private func rateLimited(backoffMS: Int?, retryAfter: String?) -> SimulatorResponse {
        counters.rateLimitedAnswers += 1
        var object: [String: Any] = ["code": 7638, "message": "Rate limit exceeded"]
        if let backoffMS { object["backoff_ms"] = backoffMS }
        var response = SimulatorResponse.json(
            429, (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data())
        if let retryAfter { response.headers["retry-after"] = retryAfter }
        return response
    }
}

/// A token bucket holding up to one second's worth of requests.
struct TokenBucket: Sendable {
    let rate: Double
    private var tokens: Double
    private var last: ContinuousClock.Instant

    init(rate: Double, now: ContinuousClock.Instant) {
        self.rate = max(rate, 0.001)
        self.tokens = max(self.rate, 1)
        self.last = now
    }

    /// Takes a token; returns nil on success, or how long until one is available.
    mutating func take(now: ContinuousClock.Instant) -> Duration? {
        let elapsed = now - last
        last = now
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        tokens = min(max(rate, 1), tokens + seconds * rate)
        if tokens >= 1 {
            tokens -= 1
            return nil
        }
        return .seconds((1 - tokens) / rate)
    }
}
