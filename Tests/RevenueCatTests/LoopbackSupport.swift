import AsyncHTTPClient
import Foundation
import Logging
import RevenueCat
import SourceHTTP
import StoreSimulator
import SubreconTestSupport

/// Records what the client asks of its gate.
final class RecordingGate: RequestGate, @unchecked Sendable {
    private let lock = NSLock()
    private var acquired = 0
    private var backOffs: [Duration] = []

    func acquire() async throws { lock.withLock { acquired += 1 } }
    func backOff(for duration: Duration) async { lock.withLock { backOffs.append(duration) } }

    var acquireCount: Int { lock.withLock { acquired } }
    var backOffDurations: [Duration] { lock.withLock { backOffs } }
}

/// A simulator behind a real loopback server, and a client talking to it over a real `HTTPClient`.
struct Loopback {
    static let apiKey = "sk_test_LoopbackSecret42"
    let simulator: RevenueCatSimulator
    let client: RevenueCatClient
    let observer: RecordingObserver
    let gate: RecordingGate

    static func run(
        apiKey: String = Loopback.apiKey, maxAttempts: Int = 4, requestTimeout: Duration = .seconds(30),
        productEntitlements: [String: String] = [:], max429Wait: Duration = .milliseconds(50),
        rateLimitBudget: Duration = .seconds(300), _ body: (Loopback) async throws -> Void
    ) async throws {
        let simulator = RevenueCatSimulator(apiKey: Loopback.apiKey, productEntitlements: productEntitlements)
        try await withLoopback(routes: [simulator]) { server, http in
            let configuration = RevenueCatConfiguration(
                baseURL: server.baseURL, apiKey: apiKey,
                requestPolicy: SourceRequestPolicy(
                    requestTimeout: requestTimeout, maxBodyBytes: RevenueCatConfiguration.defaultMaxBodyBytes,
                    maxAttempts: maxAttempts, baseBackoff: .milliseconds(5), maxBackoff: .milliseconds(20),
                    maxRateLimitWait: max429Wait, rateLimitBudget: rateLimitBudget))
            let observer = RecordingObserver()
            let gate = RecordingGate()
            let client = RevenueCatClient(
                httpClient: http, configuration: configuration, logger: Logger(label: "test.revenuecat"),
                observer: observer, gate: gate)
            try await body(Loopback(simulator: simulator, client: client, observer: observer, gate: gate))
        }
    }
}
