import AsyncHTTPClient
import Foundation
import Logging
import SourceHTTP
import StoreSimulator
import SubreconCore
import SubreconTestSupport
import Testing

@testable import RevenueCat

@Suite("RevenueCat client against the loopback simulator")
struct RevenueCatClientTests {
    static let t0 = Date(timeIntervalSince1970: 1_772_330_405)  // 2026-03-01T02:00:05Z

    static let subscriber = SimulatedSubscriber(
        originalAppUserID: "user-1",
        subscriptions: [
            SimulatedSubscription(
                productID: "pro_monthly", store: "app_store", purchaseDate: t0.addingTimeInterval(-86_400 * 20),
                expiresDate: t0.addingTimeInterval(86_400 * 10), billingIssuesDetectedAt: t0.addingTimeInterval(-3600),
                storeTransactionID: "2000000812345678", price: SimulatedPrice(amount: Decimal(string: "9.99")!, currency: "usd"))
        ],
        nonSubscriptions: [
            SimulatedNonSubscription(
                productID: "lifetime", id: "abc", store: "play_store", isSandbox: true,
                purchaseDate: t0.addingTimeInterval(-86_400 * 100))
        ])

    @Test("a known subscriber decodes from the simulator's own encoding; Bearer sent, no X-Platform")
    func knownSubscriber() async throws {
        try await Loopback.run(productEntitlements: ["pro_monthly": "pro", "lifetime": "extras"]) { loop in
            await loop.simulator.setClock(Self.t0)
            await loop.simulator.setSubscriber(Self.subscriber, for: "user-1")
            let fetched = try await loop.client.subscriber("user-1")
            #expect(fetched.status == 200)
            #expect(fetched.response.requestDate == Self.t0)
            #expect(fetched.response.subscriber.entitlements.keys.sorted() == ["extras", "pro"])

            let facts = await loop.client.facts(for: "user-1")
            #expect(facts.revenueCatKnowsSubscriber)
            #expect(facts.errors.isEmpty)
            #expect(facts.revenueCatPurchases.map(\.productID) == ["pro_monthly", "lifetime"])
            let pro = facts.revenueCatPurchases[0]
            #expect(pro.store == .appStore)
            #expect(pro.expiresDate == Self.t0.addingTimeInterval(86_400 * 10))
            #expect(pro.billingIssueDetectedAt == Self.t0.addingTimeInterval(-3600))
            #expect(pro.autoRenew == true)
            #expect(pro.storeTransactionID == "2000000812345678")
            #expect(pro.price == Money(amount: Decimal(string: "9.99")!, currency: "USD"))
            let lifetime = facts.revenueCatPurchases[1]
            // A one-time purchase: its kind is what its entitlement says, read by the core.
            #expect(lifetime.kind == .unstated && lifetime.isSandbox == true && lifetime.store == .playStore)

            let requests = await loop.simulator.recordedRequests()
            #expect(requests.count == 2)
            for request in requests {
                #expect(request.headers["authorization"] == "Bearer \(Loopback.apiKey)")
                #expect(request.headers["accept"] == "application/json")
                #expect(request.headers["x-platform"] == nil)
            }
            #expect(
                loop.observer.entries == [
                    .init(source: "revenuecat", status: 200, retried: false),
                    .init(source: "revenuecat", status: 200, retried: false),
                ])
            #expect(loop.gate.acquireCount == 2)
        }
    }

    @Test("an unknown user is created with 201 and stays unknown to the decision while empty")
    func unknownUser() async throws {
        try await Loopback.run { loop in
            let first = try await loop.client.subscriber("new-user")
            #expect(first.status == 201)
            #expect(first.response.subscriber.originalAppUserID == "new-user")
            #expect(await loop.client.facts(for: "new-user").revenueCatKnowsSubscriber == false)
            #expect(try await loop.client.subscriber("new-user").status == 200)
            #expect(await loop.simulator.counters().requestsPerUser["new-user"] == 3)
        }
    }

    @Test(
        "ids with $, :, /, spaces and non-ASCII reach the simulator intact",
        arguments: [
            "$RCAnonymousID:0123abcd", "team/alice", "with space+plus", "ünï?#&=%",
        ])
    func idEncoding(id: String) async throws {
        try await Loopback.run { loop in
            await loop.simulator.setSubscriber(Self.subscriber, for: id)
            let facts = await loop.client.facts(for: id)
            #expect(facts.errors.isEmpty)
            #expect(facts.revenueCatKnowsSubscriber)
            #expect(await loop.simulator.recordedRequests().map(\.appUserID) == [id])
        }
    }

    @Test("a 500 is retried and the second answer is used")
    func serverErrorThenSuccess() async throws {
        try await Loopback.run { loop in
            await loop.simulator.setSubscriber(Self.subscriber, for: "u")
            await loop.simulator.setFault(.status(500), for: "u", times: 1)
            let facts = await loop.client.facts(for: "u")
            #expect(facts.errors.isEmpty)
            #expect(facts.revenueCatKnowsSubscriber)
            #expect(await loop.simulator.counters().totalRequests == 2)
            #expect(loop.observer.entries.map(\.status) == [500, 200])
            #expect(loop.observer.entries.map(\.retried) == [false, true])
        }
    }

    @Test("a 503 that never ends is a fetch error after maxAttempts attempts")
    func serverErrorForever() async throws {
        try await Loopback.run(maxAttempts: 3) { loop in
            await loop.simulator.setFault(.status(503), for: "u")
            let facts = await loop.client.facts(for: "u")
            let error = try #require(facts.errors.first)
            #expect(facts.errors.count == 1)
            #expect(error.origin == .revenueCat && error.kind == .fetch)
            #expect(error.message.contains("HTTP 503"))
            #expect(error.message.contains("3 attempts"))
            #expect(facts.revenueCatPurchases.isEmpty && !facts.revenueCatKnowsSubscriber)
            #expect(await loop.simulator.counters().totalRequests == 3)
        }
    }

    @Test("a 429 with backoff_ms or Retry-After is waited out and retried, and tells the gate")
    func rateLimitedThenSuccess() async throws {
        try await Loopback.run(max429Wait: .seconds(1)) { loop in
            await loop.simulator.setSubscriber(Self.subscriber, for: "u")
            await loop.simulator.setFault(.rateLimited(backoffMS: 80, retryAfter: nil), for: "u", times: 1)
            await loop.simulator.setFault(.rateLimited(backoffMS: nil, retryAfter: "0.1"), for: "u", times: 1)
            let facts = await loop.client.facts(for: "u")
            #expect(facts.errors.isEmpty)
            let counters = await loop.simulator.counters()
            #expect(counters.totalRequests == 3)
            #expect(counters.rateLimitedAnswers == 2)
            #expect(loop.gate.backOffDurations == [.milliseconds(80), .milliseconds(100)])
            #expect(loop.observer.entries.map(\.status) == [429, 429, 200])
        }
    }

    @Test("429s do not use up the attempts meant for 5xx: more 429s than maxAttempts still end in an answer")
    func rateLimitedMoreThanAttempts() async throws {
        try await Loopback.run(maxAttempts: 2) { loop in
            await loop.simulator.setSubscriber(Self.subscriber, for: "u")
            await loop.simulator.setFault(.rateLimited(backoffMS: 1, retryAfter: nil), for: "u", times: 5)
            let result = try await loop.client.subscriber("u")
            #expect(result.status == 200 && result.attempts == 6)
            #expect(await loop.simulator.counters().rateLimitedAnswers == 5)
        }
    }

    @Test("429 forever is given up when the lookup's wait budget is spent, saying rate limited")
    func rateLimitedForever() async throws {
        // Every wait is the 50 ms floor (asked 1 ms): 6 waits fill the 300 ms budget, the 7th 429 gives up.
        try await Loopback.run(maxAttempts: 2, rateLimitBudget: .milliseconds(300)) { loop in
            await loop.simulator.setFault(.rateLimited(backoffMS: 1, retryAfter: "1"), for: "u")
            let facts = await loop.client.facts(for: "u")
            let message = try #require(facts.errors.first?.message)
            #expect(message.contains("rate limited") && message.contains("budget") && message.contains("7 attempts"))
            #expect(await loop.simulator.counters().totalRequests == 7)
            #expect(loop.gate.backOffDurations == Array(repeating: .milliseconds(50), count: 6) + [.zero])
        }
    }

    @Test(
        "a 429 asking for an absurd wait (backoff_ms 1e19, Retry-After inf, far HTTP-date) is a fetch error at once, never a trap or a sleep",
        arguments: [
            ([:], #"{"code": 7638, "message": "Rate limit", "backoff_ms": 1e19}"#, "asked to wait 1e+16 s"),
            (["Retry-After": "inf"], #"{"code": 7638}"#, "unbounded wait"),
            (["Retry-After": "99999999999999999999999"], "", "asked to wait"),
            (["Retry-After": "Fri, 31 Dec 9999 23:59:59 GMT"], "not json", "asked to wait"),
            ([:], #"{"backoff_ms": "3600000"}"#, "asked to wait 3600 s"),
        ] as [([String: String], String, String)])
    func absurdWaits(headers: [String: String], body: String, says: String) async throws {
        try await Loopback.run(max429Wait: .seconds(60)) { loop in
            await loop.simulator.setSubscriber(Self.subscriber, for: "u")
            await loop.simulator.setFault(.raw(status: 429, headers: headers, body: Data(body.utf8)), for: "u", times: 1)
            let facts = await loop.client.facts(for: "u")
            let error = try #require(facts.errors.first)
            #expect(error.kind == .fetch)
            #expect(error.message.contains("rate limited (HTTP 429)") && error.message.contains(says), "\(error.message)")
            #expect(error.message.contains("60 s cap"))
            #expect(await loop.simulator.counters().totalRequests == 1)
            #expect(loop.gate.backOffDurations == [.zero], "the shared rate is lowered, nobody is paused for the absurd wait")
        }
    }

    @Test("a 429 with NaN, negative or unreadable waits falls back to the client's own backoff and succeeds")
    func unusableWaits() async throws {
        try await Loopback.run { loop in
            await loop.simulator.setSubscriber(Self.subscriber, for: "u")
            for (headers, body) in [
                (["Retry-After": "nan"], #"{"backoff_ms": -5}"#), (["Retry-After": "-inf"], #"{"backoff_ms": 1e400}"#),
                (["Retry-After": ""], #"{"backoff_ms": "soon"}"#),
            ] {
                await loop.simulator.setFault(.raw(status: 429, headers: headers, body: Data(body.utf8)), for: "u", times: 1)
            }
            let result = try await loop.client.subscriber("u")
            #expect(result.status == 200 && result.attempts == 4)
            #expect(loop.gate.backOffDurations.count == 3)
            #expect(
                loop.gate.backOffDurations == Array(repeating: .milliseconds(50), count: 3), "own backoff (<= 20 ms) raised to the floor")
        }
    }

    @Test("a malformed body is a fetch error and is not retried")
    func malformedJSON() async throws {
        try await Loopback.run { loop in
            await loop.simulator.setFault(.malformedJSON, for: "u")
            let facts = await loop.client.facts(for: "u")
            let message = try #require(facts.errors.first?.message)
            #expect(message.hasPrefix("malformed JSON"))
            #expect(await loop.simulator.counters().totalRequests == 1)
        }
    }

    @Test("an answer slower than the request timeout is a fetch error saying timed out")
    func timeout() async throws {
        try await Loopback.run(maxAttempts: 2, requestTimeout: .milliseconds(200)) { loop in
            await loop.simulator.setRejectsConcurrentRequests(false)
            await loop.simulator.setFault(.delay(.seconds(1)), for: "u")
            let facts = await loop.client.facts(for: "u")
            let message = try #require(facts.errors.first?.message)
            #expect(message.contains("timed out"))
            // Two attempts by the client; under load the second may time out before the server has read it.
            #expect((1...2).contains(await loop.simulator.counters().totalRequests))
            #expect(loop.observer.entries.map(\.status) == [nil, nil])
        }
    }

    @Test("a wrong key is a 401 fetch error, not retried, and the key is nowhere in the message")
    func unauthorized() async throws {
        let wrongKey = "sk_wrong_DoNotLeakThis"
        try await Loopback.run(apiKey: wrongKey) { loop in
            let facts = await loop.client.facts(for: "u")
            let message = try #require(facts.errors.first?.message)
            #expect(message.contains("HTTP 401"))
            #expect(message.contains("7225"))
            #expect(!message.contains(wrongKey) && !message.contains("DoNotLeak"))
            #expect(await loop.simulator.counters().totalRequests == 1)
        }
    }

    @Test("nothing listening is a network fetch error after the configured attempts")
    func connectionRefused() async throws {
        // Port 1 on loopback is served by nothing of ours: connections are refused (at once; the 60 s request timeout
        // only keeps a loaded machine from turning the refusal into a timeout).
        let http = HTTPClient(eventLoopGroupProvider: .singleton)
        let observer = RecordingObserver()
        let client = RevenueCatClient(
            httpClient: http,
            configuration: RevenueCatConfiguration(
                baseURL: "http://127.0.0.1:1", apiKey: "k",
                requestPolicy: SourceRequestPolicy(requestTimeout: .seconds(60), maxAttempts: 2, baseBackoff: .milliseconds(1))),
            logger: Logger(label: "test.revenuecat"), observer: observer)
        let facts = await client.facts(for: "u")
        try await http.shutdown()
        #expect(facts.errors.first?.kind == .fetch)
        let message = try #require(facts.errors.first?.message)
        #expect(message.contains("network error"), "\(message)")
        #expect(observer.entries.map(\.status) == [nil, nil])
    }
}
