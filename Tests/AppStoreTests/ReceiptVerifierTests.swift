import AsyncHTTPClient
import Foundation
import Logging
import SourceHTTP
import StoreSimulator
import SubreconCore
import SubreconTestSupport
import Testing

@testable import AppStore

/// The receipt simulator on loopback and a verifier talking to it over real HTTP.
struct ReceiptHarness {
    static let secret = "0123456789abcdef0123456789abcdef"
    static let bundleID = "com.example.receipts"
    let server: SimulatorServer
    let simulator: AppleReceiptSimulator
    let httpClient = HTTPClient(eventLoopGroupProvider: .singleton)
    let observer = RecordingObserver()
    let sleeper = RecordingSleeper()

    init(_ scenarios: [AppleReceiptScenario]) async throws {
        simulator = AppleReceiptSimulator(sharedSecret: Self.secret, bundleID: Self.bundleID, scenarios: scenarios)
        server = try await SimulatorServer.start(routes: [simulator])
    }

    /// `split`: production and sandbox at distinct URLs (21007 → sandbox); otherwise one URL serves both.
    func verifier(secret: String = ReceiptHarness.secret, split: Bool = true) -> ReceiptVerifier {
        let configuration = ReceiptVerifierConfiguration(
            sharedSecret: secret, bundleID: Self.bundleID,
            urlOverride: server.baseURL + (split ? "/production/verifyReceipt" : "/verifyReceipt"),
            sandboxURLOverride: split ? server.baseURL + "/sandbox/verifyReceipt" : nil,
            requestPolicy: SourceRequestPolicy(
                maxBodyBytes: ReceiptVerifierConfiguration.defaultMaxBodyBytes, maxAttempts: 3, baseBackoff: .milliseconds(10)))
        let sleeper = self.sleeper
        return ReceiptVerifier(
            configuration: configuration, httpClient: httpClient, logger: Logger(label: "test.receipts"), observer: observer,
            sleep: { try await sleeper.sleep($0) })
    }

    /// Runs `body`, then closes the client's connections and stops the server, whether `body` threw or not.
    static func with(_ scenarios: [AppleReceiptScenario], _ body: (ReceiptHarness) async throws -> Void) async throws {
        let harness = try await ReceiptHarness(scenarios)
        do {
            try await body(harness)
        } catch {
            await harness.stop()
            throw error
        }
        await harness.stop()
    }

    func stop() async {
        try? await httpClient.shutdown()
        await server.shutdown()
    }
}

@Suite("ReceiptVerifier over loopback against the verifyReceipt simulator", .serialized)
struct ReceiptVerifierTests {
    static let now = Date(timeIntervalSince1970: 1_780_000_000)
    static func day(_ n: Double) -> Date { now.addingTimeInterval(n * 86_400) }

    static func receipt(_ data: String, environment: StoreEnvironment = .production) -> AppleReceiptScenario {
        AppleReceiptScenario(
            receiptData: data, environment: environment,
            transactions: [
                .init(
                    originalTransactionID: "5000", transactionID: "5000", productID: "basic.monthly", purchaseDate: day(-62),
                    expiresDate: day(-32)),
                .init(
                    originalTransactionID: "5000", transactionID: "5001", productID: "basic.monthly", purchaseDate: day(-32),
                    expiresDate: day(-2)),
                .init(
                    originalTransactionID: "5000", transactionID: "5002", productID: "pro.monthly", purchaseDate: day(-2),
                    expiresDate: day(28), isTrialPeriod: true),
                .init(
                    originalTransactionID: "6000", productID: "extra.monthly", purchaseDate: day(-40), expiresDate: day(-10),
                    cancellationDate: day(-20)),
            ],
            renewals: [
                .init(
                    originalTransactionID: "5000", productID: "pro.monthly", autoRenew: true, isInBillingRetryPeriod: true,
                    gracePeriodExpiresDate: day(5)),
                .init(originalTransactionID: "6000", productID: "extra.monthly", autoRenew: false, expirationIntent: 1),
            ])
    }

    @Test("a production receipt: the latest transaction of each subscription with its pending renewal")
    func production() async throws {
        try await ReceiptHarness.with([Self.receipt("prod-receipt")]) { harness in
            let answer = try await harness.verifier().verify(receiptData: "prod-receipt", productID: "basic.monthly").get()
            #expect(answer.environment == .production && answer.status == 0)
            #expect(answer.originalTransactionID == "5000", "the row's product names the subscription")
            #expect(answer.trialOriginalTransactionIDs == ["5000"])
            let main = try #require(answer.purchases.first { $0.originalTransactionID == "5000" })
            #expect(main.productID == "pro.monthly" && main.storeTransactionID == "5002", "latest by expiry, across the group")
            #expect(main.origin == .appStore && main.store == .appStore && main.isSandbox == false)
            #expect(main.expiresDate == Self.day(28) && main.gracePeriodExpiresDate == Self.day(5))
            #expect(main.billingIssueDetectedAt == Self.day(28) && main.autoRenew == true && main.refundedAt == nil)
            let refunded = try #require(answer.purchases.first { $0.originalTransactionID == "6000" })
            #expect(refunded.refundedAt == Self.day(-20) && refunded.autoRenew == false)
            #expect(harness.observer.statuses == [200])
            #expect(await harness.simulator.lastExcludeOldTransactions() == true)
        }
    }

    @Test("a sandbox receipt: production says 21007, sandbox answers, facts are sandbox")
    func sandboxFallback() async throws {
        try await ReceiptHarness.with([Self.receipt("sandbox-receipt", environment: .sandbox)]) { harness in
            let answer = try await harness.verifier().verify(receiptData: "sandbox-receipt").get()
            #expect(answer.environment == .sandbox)
            #expect(answer.originalTransactionID == "5000", "without a product: the latest subscription")
            #expect(answer.purchases.allSatisfy { $0.isSandbox == true })
            #expect(harness.observer.entries.count == 2)
            // One URL serving both: the answer's environment is believed.
            let shared = try await harness.verifier(split: false).verify(receiptData: "sandbox-receipt").get()
            #expect(shared.environment == .sandbox && shared.purchases.allSatisfy { $0.isSandbox == true })
        }
    }

    @Test("a wrong shared secret is 21004, a fetch error that never shows the secret")
    func wrongSecret() async throws {
        try await ReceiptHarness.with([Self.receipt("prod-receipt")]) { harness in
            let wrong = "ffffffffffffffffwrongsecretffff"
            let result = await harness.verifier(secret: wrong).verify(receiptData: "prod-receipt")
            guard case .failure(let error) = result else {
                Issue.record("expected a failure")
                return
            }
            #expect(error.origin == .appStore && error.kind == .fetch)
            #expect(error.message.contains("21004"))
            #expect(!error.message.contains(wrong) && !error.message.contains("prod-receipt"))
            #expect(!String(describing: harness.verifier(secret: wrong).configuration).contains(wrong))
        }
    }

    @Test("other statuses, HTTP errors and malformed bodies are fetch errors; retryable ones are retried")
    func failures() async throws {
        try await ReceiptHarness.with([Self.receipt("r1"), Self.receipt("r2"), Self.receipt("r3"), Self.receipt("r4")]) { harness in
            let verifier = harness.verifier()

            await harness.simulator.setFault(.status(21010, times: 1), for: "r1")
            let notFound = await verifier.verify(receiptData: "r1")
            #expect(notFound.failureMessage != nil)
            if case .failure(let error) = notFound { #expect(error.kind == .fetch && error.message.contains("21010")) }
            #expect(await verifier.verify(receiptData: "unknown").failureMessage?.contains("21003") == true)

            await harness.simulator.setFault(.malformedBody, for: "r2")
            #expect(await verifier.verify(receiptData: "r2").failureMessage?.contains("malformed") == true)

            await harness.simulator.setFault(.status(21005, times: 2), for: "r3")
            let recovered = try await verifier.verify(receiptData: "r3").get()
            #expect(recovered.originalTransactionID == "5000", "21005 twice, then an answer")
            #expect(harness.sleeper.waits.count == 2)

            await harness.simulator.setFault(.http(503, times: 5), for: "r4")
            let down = await verifier.verify(receiptData: "r4")
            #expect(down.failureMessage?.contains("gave up after 3 attempts") == true)
            #expect(down.failureMessage?.contains("HTTP 503") == true)
            for message in [notFound, down].compactMap(\.failureMessage) { #expect(!message.contains(ReceiptHarness.secret)) }
        }
    }
}

extension Result where Failure == SourceError {
    var failureMessage: String? {
        if case .failure(let error) = self { return error.message }
        return nil
    }
}
