import AsyncHTTPClient
import Crypto
import Foundation
import Logging
import SourceHTTP
import StoreSimulator
import SubreconCore
import SubreconTestSupport
import Testing

@testable import AppStore

/// A simulator on loopback and a client talking to it over real HTTP.
struct AppStoreHarness {
    let server: SimulatorServer
    let simulator: AppStoreSimulator
    /// `POST /inApps/v1/notifications/history`, signed with the same PKI.
    let history: AppleNotificationHistorySimulator
    let client: AppStoreClient
    let httpClient: HTTPClient
    let observer = RecordingObserver()
    let sleeper = RecordingSleeper()

    static let bundleID = "com.example.subrecon"

    /// `split`: production and sandbox at distinct base URLs; otherwise one override serves both.
    init(scenarios: [AppStoreScenario], split: Bool = true, keyID: String = "KEY123") async throws {
        let apiKey = P256.Signing.PrivateKey()
        let pki = try AppleTestPKI.generate()
        simulator = try AppStoreSimulator(
            pki: pki, apiPublicKey: apiKey.publicKey, issuerID: "issuer-uuid", keyID: "KEY123", bundleID: Self.bundleID,
            scenarios: scenarios)
        history = try AppleNotificationHistorySimulator(
            pki: pki, apiPublicKey: apiKey.publicKey, issuerID: "issuer-uuid", keyID: "KEY123", bundleID: Self.bundleID)
        server = try await SimulatorServer.start(routes: [simulator, history])
        let configuration = try AppStoreConfiguration(
            issuerID: "issuer-uuid", keyID: keyID, privateKeyPEM: apiKey.pemRepresentation, bundleID: Self.bundleID,
            baseURLOverride: split ? server.baseURL + "/production" : server.baseURL,
            sandboxBaseURLOverride: split ? server.baseURL + "/sandbox" : nil, rootCertificates: [pki.root],
            requestPolicy: SourceRequestPolicy(
                maxBodyBytes: AppStoreConfiguration.defaultMaxBodyBytes, maxAttempts: 3, baseBackoff: .milliseconds(10),
                maxBackoff: .seconds(5)))
        let sleeper = self.sleeper
        // Our own client: `SimulatorServer.shutdown()` waits for open keep-alive connections, so they are closed first.
        httpClient = HTTPClient(eventLoopGroupProvider: .singleton)
        client = try AppStoreClient(
            configuration: configuration, httpClient: httpClient, logger: Logger(label: "test.appstore"),
            observer: observer, sleep: { try await sleeper.sleep($0) })
    }

    func stop() async {
        try? await httpClient.shutdown()
        await server.shutdown()
    }
}

@Suite("AppStoreClient over loopback against the simulator", .serialized)
struct AppStoreClientEndToEndTests {
    static let day: TimeInterval = 86_400

    static func scenario(
        _ id: String, status: Int, expiresIn: TimeInterval, grace: TimeInterval? = nil, revokedAgo: TimeInterval? = nil,
        autoRenew: Bool = true, retry: Bool = false, environment: StoreEnvironment = .production
    ) -> AppStoreScenario {
        let now = Date()
        return AppStoreScenario(
            originalTransactionID: id, transactionID: id + "9", productID: "pro.monthly", status: status,
            environment: environment, purchaseDate: now.addingTimeInterval(expiresIn - 30 * day),
            expiresDate: now.addingTimeInterval(expiresIn), gracePeriodExpiresDate: grace.map { now.addingTimeInterval($0) },
            revocationDate: revokedAgo.map { now.addingTimeInterval(-$0) }, autoRenew: autoRenew,
            isInBillingRetryPeriod: retry, price: 12_990, currency: "USD")
    }

    @Test("active, expired, grace, billing retry and revoked subscriptions map to the right judgements")
    func statuses() async throws {
        let harness = try await AppStoreHarness(scenarios: [
            Self.scenario("101", status: 1, expiresIn: 10 * Self.day),
            Self.scenario("102", status: 2, expiresIn: -5 * Self.day, autoRenew: false),
            Self.scenario("103", status: 4, expiresIn: -1 * Self.day, grace: 6 * Self.day, retry: true),
            Self.scenario("104", status: 3, expiresIn: -2 * Self.day, retry: true),
            Self.scenario("105", status: 5, expiresIn: 10 * Self.day, revokedAgo: Self.day, autoRenew: false),
        ])
        let expected: [(String, Bool, SubscriptionStatus)] = [
            ("101", true, .active), ("102", false, .expired), ("103", true, .billingIssue), ("104", false, .expired),
            ("105", false, .refunded),
        ]
        for (id, entitled, status) in expected {
            let facts = try await harness.client.subscriptionFacts(transactionID: id).get()
            try #require(facts.count == 1, "id \(id)")
            let fact = facts[0]
            #expect(fact.lookupID == id)
            #expect(fact.purchase.originalTransactionID == id)
            #expect(fact.purchase.storeTransactionID == id + "9")
            #expect(fact.purchase.origin == .appStore)
            #expect(fact.purchase.isSandbox == false)
            #expect(fact.purchase.price == Money(amount: Decimal(string: "12.99")!, currency: "USD"))
            let judgement = try #require(Decision.judge(fact.purchase, asOf: Date()).known, "id \(id)")
            #expect(judgement.entitled == entitled, "id \(id)")
            #expect(judgement.status == status, "id \(id)")
        }
        // Looking up by the latest transaction id finds the same subscription.
        let byTransaction = try await harness.client.subscriptionFacts(transactionID: "1019").get()
        #expect(byTransaction.map(\.purchase.originalTransactionID) == ["101"])
        await harness.stop()
    }

    @Test("the simulator received a bearer token with Apple's header and claims")
    func tokenClaims() async throws {
        let harness = try await AppStoreHarness(scenarios: [Self.scenario("201", status: 1, expiresIn: Self.day)])
        _ = try await harness.client.subscriptionFacts(transactionID: "201").get()
        let token = try #require(await harness.simulator.lastToken())
        #expect(token.accepted)
        #expect(token.header["alg"] == "ES256")
        #expect(token.header["kid"] == "KEY123")
        #expect(token.header["typ"] == "JWT")
        #expect(token.issuer == "issuer-uuid")
        #expect(token.audience == "appstoreconnect-v1")
        #expect(token.bundleID == AppStoreHarness.bundleID)
        let issuedAt = try #require(token.issuedAt)
        let expiresAt = try #require(token.expiresAt)
        #expect(expiresAt - issuedAt <= 3600)
        #expect(issuedAt < Int(Date().timeIntervalSince1970))
        await harness.stop()
    }

    @Test("4040010 in production falls back to sandbox, whose facts are sandbox")
    func sandboxFallback() async throws {
        let harness = try await AppStoreHarness(scenarios: [
            Self.scenario("301", status: 1, expiresIn: Self.day, environment: .sandbox)
        ])
        let facts = try await harness.client.subscriptionFacts(transactionID: "301").get()
        #expect(facts.map(\.purchase.isSandbox) == [true])
        #expect(await harness.simulator.requestCount(for: "301") == 2)
        #expect(harness.observer.statuses == [404, 200])
        await harness.stop()
    }

    @Test("one URL for both environments: the response's environment is verified and kept")
    func sharedURL() async throws {
        let harness = try await AppStoreHarness(
            scenarios: [Self.scenario("302", status: 1, expiresIn: Self.day, environment: .sandbox)], split: false)
        let facts = try await harness.client.subscriptionFacts(transactionID: "302").get()
        #expect(facts.map(\.purchase.isSandbox) == [true])
        #expect(await harness.simulator.requestCount(for: "302") == 1)
        await harness.stop()
    }

    @Test("an id unknown in both environments is absence (an empty answer), asked in both")
    func unknownID() async throws {
        let harness = try await AppStoreHarness(scenarios: [])
        let answer = try await harness.client.subscriptionFacts(transactionID: "404404").get()
        #expect(answer.isEmpty)
        #expect(await harness.simulator.requestCount(for: "404404") == 2)
        await harness.stop()
    }

    @Test("429 with Retry-After waits until the given instant, then succeeds")
    func rateLimited() async throws {
        let harness = try await AppStoreHarness(scenarios: [Self.scenario("401", status: 1, expiresIn: Self.day)])
        await harness.simulator.setFault(.rateLimited(after: .seconds(2), times: 1), for: "401")
        let facts = try await harness.client.subscriptionFacts(transactionID: "401").get()
        #expect(facts.count == 1)
        #expect(harness.observer.statuses == [429, 200])
        #expect(harness.observer.retried == [false, true])
        let waits = harness.sleeper.waits
        try #require(waits.count == 1)
        #expect(waits[0] > .milliseconds(500) && waits[0] <= .seconds(2))
        await harness.stop()
    }

    @Test("retryable 4040002 is retried; 5xx beyond the attempt budget gives up")
    func retryable() async throws {
        let harness = try await AppStoreHarness(scenarios: [
            Self.scenario("501", status: 1, expiresIn: Self.day), Self.scenario("502", status: 1, expiresIn: Self.day),
        ])
        await harness.simulator.setFault(.error(status: 404, errorCode: 4_040_002, times: 2), for: "501")
        #expect(try await harness.client.subscriptionFacts(transactionID: "501").get().count == 1)
        #expect(await harness.simulator.requestCount(for: "501") == 3)
        await harness.simulator.setFault(.error(status: 500, errorCode: 5_000_001, times: 10), for: "502")
        let error = try #require(await harness.client.subscriptionFacts(transactionID: "502").failure)
        #expect(error.kind == .fetch)
        #expect(error.message.contains("5000001"))
        #expect(await harness.simulator.requestCount(for: "502") == 3)
        await harness.stop()
    }

    @Test("a non-retryable error code is a fetch error naming the code, asked once")
    func nonRetryable() async throws {
        let harness = try await AppStoreHarness(scenarios: [Self.scenario("601", status: 1, expiresIn: Self.day)])
        await harness.simulator.setFault(.error(status: 400, errorCode: 4_000_006, times: 5), for: "601")
        let error = try #require(await harness.client.subscriptionFacts(transactionID: "601").failure)
        #expect(error.kind == .fetch)
        #expect(error.message.contains("4000006"))
        #expect(await harness.simulator.requestCount(for: "601") == 1)
        await harness.stop()
    }

    @Test("a token with the wrong key id gets 401, reported without the token")
    func unauthorized() async throws {
        let harness = try await AppStoreHarness(scenarios: [Self.scenario("701", status: 1, expiresIn: Self.day)], keyID: "WRONG")
        let error = try #require(await harness.client.subscriptionFacts(transactionID: "701").failure)
        #expect(error.kind == .fetch)
        #expect(error.message.contains("401"))
        #expect(!error.message.contains("Bearer"))
        #expect(await harness.simulator.lastToken()?.accepted == false)
        #expect(await harness.simulator.requestCount(for: "701") == 1)
        await harness.stop()
    }

    @Test(
        "a forged or tampered signature is a verification error, never a fact",
        arguments: [AppStoreFault.forgedSignature, .tamperedPayload])
    func forged(_ fault: AppStoreFault) async throws {
        let harness = try await AppStoreHarness(scenarios: [Self.scenario("801", status: 1, expiresIn: Self.day)])
        await harness.simulator.setFault(fault, for: "801")
        let error = try #require(await harness.client.subscriptionFacts(transactionID: "801").failure)
        #expect(error.kind == .verification)
        #expect(error.origin == .appStore)
        await harness.stop()
    }

    @Test("a malformed body is a fetch error")
    func malformed() async throws {
        let harness = try await AppStoreHarness(scenarios: [Self.scenario("901", status: 1, expiresIn: Self.day)])
        await harness.simulator.setFault(.malformedBody, for: "901")
        let error = try #require(await harness.client.subscriptionFacts(transactionID: "901").failure)
        #expect(error.kind == .fetch)
        #expect(error.message.contains("malformed"))
        await harness.stop()
    }

    @Test("a body over the 1 MiB limit is a fetch error naming the limit, asked once (not retried)")
    func bodyTooLarge() async throws {
        let harness = try await AppStoreHarness(scenarios: [Self.scenario("902", status: 1, expiresIn: Self.day)])
        let huge = Data(repeating: UInt8(ascii: " "), count: (1 << 20) + 1)
        await harness.simulator.setFault(.raw(status: 200, headers: ["content-type": "application/json"], body: huge, times: 3), for: "902")
        let error = try #require(await harness.client.subscriptionFacts(transactionID: "902").failure)
        await harness.stop()
        #expect(error.kind == .fetch)
        #expect(error.message == "App Store Server API: response body larger than 1048576 bytes")
        #expect(await harness.simulator.requestCount(for: "902") == 1)
        #expect(harness.observer.statuses == [nil])
    }
}

extension Result {
    var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
