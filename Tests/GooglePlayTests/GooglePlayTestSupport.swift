import AsyncHTTPClient
import Foundation
import GooglePlay
import Logging
import SourceHTTP
import StoreSimulator
import SubreconCore
import SubreconTestSupport

/// One RSA key for the whole test target (key generation is the slow part).
enum TestKeys {
    static let account: GoogleTestServiceAccount = {
        do { return try GoogleTestServiceAccount.generate(tokenURI: "https://oauth2.googleapis.com/token") } catch {
            fatalError("cannot generate an RSA test key: \(error)")
        }
    }()
}

/// The Play simulator behind a real loopback server, and a client talking to it over a real `HTTPClient`.
struct PlayLoopback {
    static let package = "com.example.app"
    let simulator: GooglePlaySimulator
    let client: GooglePlayClient
    let observer: RecordingObserver
    let server: SimulatorServer

    /// `requestTimeout` is patient by default (30 s): tests that count token and API requests must not see a retry
    /// caused by a loaded machine; a test of the timeout itself passes a short one. `package` is the client's package
    /// name (another than the simulator's app: Google's `applicationNotFound`).
    static func run(
        maxAttempts: Int = 3, requestTimeout: Duration = .seconds(30), maxRateLimitWait: Duration = .seconds(1),
        signingKeyPEM: String? = nil, package clientPackage: String = PlayLoopback.package, _ body: (PlayLoopback) async throws -> Void
    ) async throws {
        let account = TestKeys.account
        let simulator = GooglePlaySimulator(account: account, packageName: package)
        try await withLoopback(routes: [simulator]) { server, http in
            let observer = RecordingObserver()
            let serviceAccount = GoogleServiceAccount(
                clientEmail: account.clientEmail, privateKeyPEM: signingKeyPEM ?? account.privateKeyPEM,
                privateKeyID: account.keyID, tokenURI: server.baseURL + "/token")
            let configuration = try GooglePlayConfiguration(
                serviceAccount: serviceAccount, packageName: clientPackage, baseURL: server.baseURL,
                requestPolicy: SourceRequestPolicy(
                    requestTimeout: requestTimeout, maxBodyBytes: GooglePlayConfiguration.defaultMaxBodyBytes,
                    maxAttempts: maxAttempts, baseBackoff: .milliseconds(5), maxBackoff: .milliseconds(20),
                    maxRateLimitWait: maxRateLimitWait, rateLimitBudget: .seconds(5)))
            let client = try GooglePlayClient(
                configuration: configuration, httpClient: http, logger: Logger(label: "google-play-tests"), observer: observer)
            try await body(PlayLoopback(simulator: simulator, client: client, observer: observer, server: server))
        }
    }
}

func day(_ n: Double) -> Date { Date().addingTimeInterval(n * 86_400) }
