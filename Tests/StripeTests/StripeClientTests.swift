import AsyncHTTPClient
import Foundation
import Logging
import SourceHTTP
import StoreSimulator
import SubreconCore
import SubreconTestSupport
import Testing

@testable import Stripe

/// A `StripeSimulator` behind a real loopback server and a `StripeClient` talking to it.
struct StripeLoopback {
    static let apiKey = "sk_test_StripeLoopbackSecret42"
    let simulator: StripeSimulator
    let client: StripeClient
    let observer: RecordingObserver

    static func run(
        apiKey: String = StripeLoopback.apiKey, maxAttempts: Int = 3, rateLimitBudget: Duration = .seconds(300),
        maxPages: Int = 20, maxEventPages: Int = 1000, maxInventoryPages: Int = 1000, requestTimeout: Duration = .seconds(30),
        _ body: (StripeLoopback) async throws -> Void
    ) async throws {
        let simulator = StripeSimulator(apiKey: StripeLoopback.apiKey)
        try await withLoopback(routes: [simulator]) { server, http in
            let configuration = StripeConfiguration(
                baseURL: server.baseURL, apiKey: apiKey,
                requestPolicy: SourceRequestPolicy(
                    requestTimeout: requestTimeout, maxAttempts: maxAttempts, baseBackoff: .milliseconds(2),
                    maxBackoff: .milliseconds(10), maxRateLimitWait: .seconds(1), rateLimitBudget: rateLimitBudget),
                maxPages: maxPages, maxEventPages: maxEventPages, maxInventoryPages: maxInventoryPages)
            let observer = RecordingObserver()
            let client = StripeClient(
                httpClient: http, configuration: configuration, logger: Logger(label: "stripe-test"), observer: observer)
            try await body(StripeLoopback(simulator: simulator, client: client, observer: observer))
        }
    }

    static let start = Date(timeIntervalSince1970: 1_780_000_000)
    static let end = Date(timeIntervalSince1970: 1_782_592_000)

    static func subscription(_ id: String, status: String = "active", product: String = "prod_pro") -> SimulatedStripeSubscription {
        SimulatedStripeSubscription(
            id: id, status: status, currentPeriodStart: start, currentPeriodEnd: end,
            items: [SimulatedStripeItem(id: "si_\(id)", priceID: "price_\(product)", productID: product, unitAmount: 1299, currency: "eur")]
        )
    }
}

@Suite("Stripe client against the loopback simulator")
struct StripeClientTests {
    @Test("a customer's subscriptions come back over three pages, with Bearer key and pinned Stripe-Version")
    func pagination() async throws {
        try await StripeLoopback.run { loop in
            let subscriptions = (1...250).map { StripeLoopback.subscription("sub_\($0)") }
            await loop.simulator.setSubscriptions(subscriptions, forCustomer: "cus_many")
            let fetched = try await loop.client.subscriptions(customerID: "cus_many").get()
            #expect(fetched.map(\.id) == subscriptions.map(\.id))
            let requests = await loop.simulator.recordedRequests()
            #expect(requests.count == 3)
            #expect(requests.map { $0.query["starting_after"] } == [nil, "sub_100", "sub_200"])
            #expect(requests.allSatisfy { $0.query["status"] == "all" && $0.query["limit"] == "100" && $0.query["customer"] == "cus_many" })
            #expect(requests.allSatisfy { $0.headers["authorization"] == "Bearer \(StripeLoopback.apiKey)" })
            #expect(requests.allSatisfy { $0.headers["stripe-version"] == StripeConfiguration.pinnedAPIVersion })
            let facts = try StripeMapping.storeFacts(fetched).get()
            #expect(facts.count == 250)
            #expect(facts[0].purchase.renewalPrice == Money(amount: Decimal(string: "12.99")!, currency: "EUR"))
            #expect(facts[0].purchase.expiresDate == StripeLoopback.end)
        }
    }

    @Test("more pages than the cap is an error, not a partial answer")
    func pageCap() async throws {
        try await StripeLoopback.run(maxPages: 2) { loop in
            await loop.simulator.setSubscriptions((1...201).map { StripeLoopback.subscription("sub_\($0)") }, forCustomer: "cus_many")
            let result = await loop.client.subscriptions(customerID: "cus_many")
            #expect(result == .failure(.tooManyPages(2)))
        }
    }

    @Test("the older layout (period on the subscription) decodes to the same end date")
    func olderLayout() async throws {
        try await StripeLoopback.run { loop in
            await loop.simulator.setPeriodLayout(.subscription)
            await loop.simulator.setSubscriptions([StripeLoopback.subscription("sub_old")], forCustomer: "cus_old")
            let fetched = try await loop.client.subscriptions(customerID: "cus_old").get()
            #expect(fetched.first?.currentPeriodEnd == StripeLoopback.end)
            #expect(fetched.first?.items?.first?.currentPeriodEnd == nil)
            #expect(try StripeMapping.storeFacts(fetched).get().first?.purchase.expiresDate == StripeLoopback.end)
        }
    }

    @Test("ids are percent-encoded; a subscription is retrieved by id; unknown ones are absence (404 resource_missing)")
    func retrieveAndAbsence() async throws {
        try await StripeLoopback.run { loop in
            await loop.simulator.setSubscriptions([StripeLoopback.subscription("sub_1")], forCustomer: "cus_a&b=c")
            let listed = try await loop.client.subscriptions(customerID: "cus_a&b=c").get()
            #expect(listed.count == 1)
            #expect(try await loop.client.subscription(id: "sub_1").get()?.id == "sub_1")
            #expect(try await loop.client.subscription(id: "sub_missing/../x").get() == nil)
            #expect(try await loop.client.subscriptions(customerID: "cus_nobody").get().isEmpty)
            let paths = await loop.simulator.recordedRequests().map(\.path)
            #expect(paths.contains("/v1/subscriptions/sub_missing%2F..%2Fx"))
        }
    }

    @Test("401 names STRIPE_API_KEY and never the key")
    func unauthorized() async throws {
        try await StripeLoopback.run(apiKey: "sk_test_WrongKey123") { loop in
            await loop.simulator.setSubscriptions([], forCustomer: "cus_1")
            guard case .failure(let error) = await loop.client.subscriptions(customerID: "cus_1") else {
                Issue.record("succeeded")
                return
            }
            guard case .keyRejected(401) = error else {
                Issue.record("\(error)")
                return
            }
            #expect(error.description.contains("STRIPE_API_KEY"))
            #expect(!error.description.contains("sk_test"), "not even Stripe's masked echo of the key")
            #expect(loop.observer.statuses == [401])
        }
    }

    @Test("429 without Retry-After is waited out with the own backoff, then answered")
    func rateLimitedThenSuccess() async throws {
        try await StripeLoopback.run { loop in
            await loop.simulator.setSubscriptions([StripeLoopback.subscription("sub_1")], forCustomer: "cus_1")
            await loop.simulator.setFault(.rateLimited, for: "cus_1", times: 3)
            let fetched = try await loop.client.subscriptions(customerID: "cus_1").get()
            #expect(fetched.count == 1)
            #expect(loop.observer.statuses == [429, 429, 429, 200])
            #expect(await loop.simulator.rateLimitedCount() == 3)
        }
    }

    @Test("429 forever ends in an error once the lookup's 429 budget is spent")
    func rateLimitedForever() async throws {
        try await StripeLoopback.run(rateLimitBudget: .milliseconds(300)) { loop in
            await loop.simulator.setSubscriptions([], forCustomer: "cus_1")
            await loop.simulator.setFault(.rateLimited, for: "cus_1")
            guard case .failure(let error) = await loop.client.subscriptions(customerID: "cus_1") else {
                Issue.record("succeeded")
                return
            }
            #expect(error.description.contains("rate limited (HTTP 429)"))
            #expect(await loop.simulator.rateLimitedCount() >= 2)
        }
    }

    @Test("500 is retried up to maxAttempts, then an error; 500 then 200 succeeds")
    func serverErrors() async throws {
        try await StripeLoopback.run(maxAttempts: 3) { loop in
            await loop.simulator.setSubscriptions([StripeLoopback.subscription("sub_1")], forCustomer: "cus_1")
            await loop.simulator.setFault(.status(500), for: "cus_1", times: 3)
            guard case .failure(let error) = await loop.client.subscriptions(customerID: "cus_1") else {
                Issue.record("succeeded")
                return
            }
            #expect(error.description == "gave up after 3 attempts: HTTP 500")
            await loop.simulator.setFault(.status(503), for: "cus_1", times: 1)
            let after503 = try await loop.client.subscriptions(customerID: "cus_1").get()
            #expect(after503.count == 1)
        }
    }

    @Test("a malformed 200 body, a list without has_more and an unexpected 404 are errors")
    func malformed() async throws {
        try await StripeLoopback.run { loop in
            await loop.simulator.setSubscriptions([], forCustomer: "cus_1")
            await loop.simulator.setFault(.malformedBody, for: "cus_1", times: 1)
            guard case .failure(.malformed) = await loop.client.subscriptions(customerID: "cus_1") else {
                Issue.record("malformed body accepted")
                return
            }
            await loop.simulator.setFault(
                .raw(status: 200, headers: [:], body: Data(#"{"object":"list","data":[]}"#.utf8)), for: "cus_1", times: 1)
            guard case .failure(.malformed) = await loop.client.subscriptions(customerID: "cus_1") else {
                Issue.record("list without has_more accepted")
                return
            }
            await loop.simulator.setFault(
                .raw(status: 404, headers: [:], body: Data("<html>not here</html>".utf8)), for: "cus_1", times: 1)
            guard case .failure(.request(let text)) = await loop.client.subscriptions(customerID: "cus_1") else {
                Issue.record("a 404 that is not resource_missing was taken as absence")
                return
            }
            #expect(text == "HTTP 404")
        }
    }

    @Test("a trickled body past the request timeout is a timeout error")
    func trickle() async throws {
        try await StripeLoopback.run(maxAttempts: 1, requestTimeout: .milliseconds(300)) { loop in
            await loop.simulator.setSubscriptions([StripeLoopback.subscription("sub_1")], forCustomer: "cus_1")
            await loop.simulator.setFault(.trickle(pause: .milliseconds(20)), for: "cus_1", times: 1)
            guard case .failure(let error) = await loop.client.subscriptions(customerID: "cus_1") else {
                Issue.record("succeeded")
                return
            }
            #expect(error.description.contains("timed out"))
        }
    }

    @Test("the configuration's description never shows the key")
    func redacted() {
        let configuration = StripeConfiguration(apiKey: "sk_live_TopSecret")
        #expect(!configuration.description.contains("sk_live_TopSecret"))
        #expect(configuration.baseURL == "https://api.stripe.com")
        #expect(configuration.apiVersion == "2025-03-31.basil")
    }
}
