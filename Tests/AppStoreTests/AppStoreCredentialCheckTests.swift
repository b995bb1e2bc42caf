import AsyncHTTPClient
import Crypto
import Foundation
import Logging
import SourceHTTP
import StoreSimulator
import SubreconTestSupport
import Testing

@testable import AppStore

/// `subrecon doctor`'s App Store read (docs/CONTRACT.md, "subrecon doctor") against the simulator, which checks the
/// signed token as Apple does and answers each case with Apple's status and error code.
@Suite("The App Store doctor read", .serialized)
struct AppStoreCredentialCheckTests {
    static let probe = AppStoreClient.probeTransactionID

    @Test("the job's key: the history of a transaction no purchase has answers 404 with 4040010, which proves the token")
    func keyHolds() async throws {
        let harness = try await AppStoreHarness(scenarios: [])
        let check = await harness.client.credentialCheck()
        await harness.stop()
        #expect(check.outcome == .holds, "\(check)")
        #expect(check.subject == "app_store")
        #expect(check.text.contains("/inApps/v2/history/\(Self.probe) (production) answered 404 with error 4040010"))
        #expect(check.text.contains(AppStoreHarness.bundleID))
        #expect(await harness.simulator.historyRequests(for: Self.probe) == 1)
        #expect(harness.observer.statuses == [404])
    }

    @Test("a token Apple refuses (another key id): 401 without a body names the variables to check; not retried")
    func wrongKey() async throws {
        let harness = try await AppStoreHarness(scenarios: [], keyID: "OTHERKEY99")
        let check = await harness.client.credentialCheck()
        await harness.stop()
        #expect(check.outcome == .misconfigured, "\(check)")
        #expect(check.text.contains("answered 401: Apple refused the API token"))
        for variable in ["APP_STORE_ISSUER_ID", "APP_STORE_KEY_ID", "APP_STORE_PRIVATE_KEY", "APP_STORE_BUNDLE_ID"] {
            #expect(check.text.contains(variable))
        }
        #expect(!check.text.contains("BEGIN") && !check.text.contains("eyJ"), "no key, no token")
        #expect(harness.observer.statuses == [401])
    }

    @Test("Apple's codes for an app it does not know name APP_STORE_BUNDLE_ID")
    func unknownApp() async throws {
        for code in [4_000_002, 4_040_003] {
            let harness = try await AppStoreHarness(scenarios: [])
            await harness.simulator.setFault(
                .error(status: code / 10_000 == 400 ? 400 : 404, errorCode: code, times: 1),
                for: AppStoreSimulator.historyFaultKey(Self.probe))
            let check = await harness.client.credentialCheck()
            await harness.stop()
            #expect(check.outcome == .misconfigured, "\(check)")
            #expect(check.text.contains("error \(code): Apple knows no app") && check.text.contains("APP_STORE_BUNDLE_ID"))
        }
    }

    @Test("an answer that proves nothing (a 403 without an error code) is said as it came, never a cause guessed")
    func unknownAnswer() async throws {
        let harness = try await AppStoreHarness(scenarios: [])
        await harness.simulator.setFault(.error(status: 403, errorCode: nil, times: 1), for: AppStoreSimulator.historyFaultKey(Self.probe))
        let check = await harness.client.credentialCheck()
        await harness.stop()
        #expect(check.outcome == .misconfigured, "\(check)")
        #expect(check.text.contains("answered HTTP 403 without an error code: not an answer that proves the key"))
    }

    @Test("Apple failing (500 every time) is unreachable after the retries, not a key problem")
    func serverError() async throws {
        let harness = try await AppStoreHarness(scenarios: [])
        await harness.simulator.setFault(
            .error(status: 500, errorCode: 5_000_000, times: 10), for: AppStoreSimulator.historyFaultKey(Self.probe))
        let check = await harness.client.credentialCheck()
        await harness.stop()
        #expect(check.outcome == .unreachable, "\(check)")
        #expect(check.text.contains("no answer about the key") && check.text.contains("3 attempts"))
        #expect(harness.observer.statuses == [500, 500, 500])
    }

    @Test("nothing listening: unreachable after the attempts, not a key problem")
    func nothingListening() async throws {
        let http = HTTPClient(eventLoopGroupProvider: .singleton)
        let configuration = try AppStoreConfiguration(
            issuerID: "issuer-uuid", keyID: "KEY123", privateKeyPEM: P256.Signing.PrivateKey().pemRepresentation,
            bundleID: AppStoreHarness.bundleID, baseURLOverride: "http://127.0.0.1:9", rootCertificates: [],
            requestPolicy: SourceRequestPolicy(requestTimeout: .seconds(2), maxAttempts: 2, baseBackoff: .milliseconds(1)))
        let observer = RecordingObserver()
        let client = try AppStoreClient(configuration: configuration, httpClient: http, logger: Logger(label: "test"), observer: observer)
        let check = await client.credentialCheck()
        try await http.shutdown()
        #expect(check.outcome == .unreachable, "\(check)")
        #expect(check.text.contains("no answer about the key: gave up after 2 attempts"))
        #expect(observer.statuses == [nil, nil])
    }
}
