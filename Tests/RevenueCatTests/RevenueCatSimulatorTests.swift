import Foundation
import StoreSimulator
import Testing

@Suite("RevenueCat simulator behaviour")
struct RevenueCatSimulatorTests {
    static let key = "sk_sim"

    static func get(_ id: String, key: String = RevenueCatSimulatorTests.key) -> SimulatorRequest {
        SimulatorRequest(
            method: "GET", path: "/v1/subscribers/" + id.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!,
            headers: ["authorization": "Bearer \(key)"])
    }

    static func json(_ response: SimulatorResponse?) throws -> [String: Any] {
        let body = try #require(response?.body)
        return try #require(try JSONSerialization.jsonObject(with: body) as? [String: Any])
    }

    @Test("requests outside /v1/subscribers/{id} are not its own")
    func notOwnPath() async {
        let simulator = RevenueCatSimulator(apiKey: Self.key)
        #expect(await simulator.handle(SimulatorRequest(method: "GET", path: "/inApps/v1/subscriptions/1")) == nil)
        #expect(await simulator.handle(SimulatorRequest(method: "GET", path: "/v1/subscribers/a/b")) == nil)
    }

    @Test("a missing or wrong key is 401 with code 7225")
    func auth() async throws {
        let simulator = RevenueCatSimulator(apiKey: Self.key)
        let response = await simulator.handle(Self.get("u", key: "nope"))
        #expect(response?.status == 401)
        #expect(try Self.json(response)["code"] as? Int == 7225)
        #expect(await simulator.subscriber("u") == nil)
    }

    @Test("the wire format has ISO dates without fractions, nulls, and derived entitlements with the furthest expiry")
    func wireFormat() async throws {
        let t0 = Date(timeIntervalSince1970: 1_772_330_405.75)
        let simulator = RevenueCatSimulator(apiKey: Self.key, productEntitlements: ["monthly": "pro", "yearly": "pro"])
        await simulator.setClock(t0)
        await simulator.setSubscriber(
            SimulatedSubscriber(subscriptions: [
                SimulatedSubscription(productID: "monthly", purchaseDate: t0, expiresDate: t0.addingTimeInterval(100)),
                SimulatedSubscription(productID: "yearly", purchaseDate: t0, expiresDate: t0.addingTimeInterval(900)),
            ]), for: "u")
        let response = await simulator.handle(Self.get("u"))
        #expect(response?.status == 200)
        let top = try Self.json(response)
        #expect(top["request_date"] as? String == "2026-03-01T02:00:05Z")
        let subscriber = try #require(top["subscriber"] as? [String: Any])
        let entitlements = try #require(subscriber["entitlements"] as? [String: [String: Any]])
        #expect(entitlements["pro"]?["product_identifier"] as? String == "yearly")
        let monthly = try #require((subscriber["subscriptions"] as? [String: [String: Any]])?["monthly"])
        #expect(monthly["refunded_at"] is NSNull)
        #expect(monthly["expires_date"] as? String == "2026-03-01T02:01:45Z")
    }

    @Test("faults apply in order for their count, then the normal answer returns")
    func faultQueue() async {
        let simulator = RevenueCatSimulator(apiKey: Self.key)
        await simulator.setFault(.status(500), for: "u", times: 2)
        await simulator.setFault(.rateLimited(backoffMS: 10, retryAfter: "1"), for: "u", times: 1)
        var statuses: [Int] = []
        for _ in 0..<5 { statuses.append(await simulator.handle(Self.get("u"))?.status ?? 0) }
        #expect(statuses == [500, 500, 429, 201, 200])
        let counters = await simulator.counters(reset: true)
        #expect(counters.totalRequests == 5 && counters.rateLimitedAnswers == 1)
        #expect(await simulator.counters().totalRequests == 0)
    }

    @Test("two requests in flight for one user are counted and the second is answered 429")
    func concurrentSameUser() async {
        let simulator = RevenueCatSimulator(apiKey: Self.key)
        await simulator.setLatency(.seconds(3))
        async let first = simulator.handle(Self.get("u"))
        // Waits for what the test needs, the first request inside its latency, not for a guess at how long that takes.
        for _ in 0..<2_000 where await simulator.inFlightRequests(for: "u") == 0 { try? await Task.sleep(for: .milliseconds(1)) }
        async let second = simulator.handle(Self.get("u"))
        let statuses = await [first?.status, second?.status].compactMap { $0 }.sorted()
        #expect(statuses == [201, 429])
        let counters = await simulator.counters()
        #expect(counters.concurrentSameUserRequests == 1)
        #expect(counters.rateLimitedAnswers == 1)
    }

    @Test("the global requests-per-second limit answers 429 with Retry-After once the burst is spent")
    func globalLimit() async throws {
        let simulator = RevenueCatSimulator(apiKey: Self.key)
        await simulator.setRequestsPerSecond(2)
        var statuses: [Int] = []
        var last: SimulatorResponse?
        for index in 0..<3 {
            last = await simulator.handle(Self.get("u\(index)"))
            statuses.append(last?.status ?? 0)
        }
        #expect(statuses == [201, 201, 429])
        #expect(last?.headers["retry-after"] == "1")
        #expect(try Self.json(last)["backoff_ms"] as? Int ?? 0 > 0)
        await simulator.setRequestsPerSecond(nil)
        #expect(await simulator.handle(Self.get("u9"))?.status == 201)
    }
}
