import AsyncHTTPClient
import Foundation
import Logging
import SourceHTTP
import SubreconCore

/// App Store Server API client: `Get All Subscription Statuses` → verified `StoreFact`s.
///
/// Asks production first and sandbox on 4040010 (only production is asked when one URL serves both, and the
/// response's `environment` is then trusted as the one to verify against). Every signed payload is verified
/// before it becomes a fact; a failure is a `.verification` error, never a fact. Retries 429 (honouring
/// `Retry-After`, an absolute Unix time in ms), the retryable error codes, 5xx and network errors.
/// The caller owns the `HTTPClient`.
public struct AppStoreClient: Sendable {
    /// The name used in observer calls and logs.
    public static let source = "app_store"

    public let configuration: AppStoreConfiguration
    let logger: Logger
    let transport: SourceTransport
    let verifier: JWSVerifier
    let tokens: AppStoreTokenCache
    let now: @Sendable () -> Date

    /// - Parameters:
    ///   - now: the wall clock (token times, `Retry-After`, cache ages); injected in tests.
    ///   - sleep: how to wait between attempts; `Task.sleep` by default.
    public init(
        configuration: AppStoreConfiguration, httpClient: HTTPClient, logger: Logger,
        observer: (any RequestObserver)? = nil, gate: (any RequestGate)? = nil,
        now: @escaping @Sendable () -> Date = { Date() },
        sleep: @escaping @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) }
    ) throws(AppStoreConfigurationError) {
        self.configuration = configuration
        self.logger = logger
        self.transport = SourceTransport(
            source: Self.source, httpClient: httpClient,
            policy: configuration.requestPolicy, observer: observer, gate: gate, sleep: sleep)
        self.verifier = JWSVerifier(rootCertificates: configuration.rootCertificates, bundleID: configuration.bundleID)
        self.tokens = AppStoreTokenCache(signer: try AppStoreJWTSigner(configuration: configuration))
        self.now = now
    }

    /// Apple's verified view of the subscription(s) `transactionID` (an original or any transaction id) belongs to.
    ///
    /// Returns the entry whose original transaction id (or decoded transaction id) is `transactionID`, or every
    /// entry when none matches. An id Apple does not know in any environment asked (4040010) is an empty answer:
    /// absence, not evidence (CONTRACT "Sources and the decision") — it never ends a purchase on its own.
    public func subscriptionFacts(transactionID: String) async -> Result<[StoreFact], SourceError> {
        let production = configuration.baseURL(for: .production)
        let sandbox = configuration.baseURL(for: .sandbox)
        let shared = production == sandbox
        let environments: [StoreEnvironment] =
            configuration.environment == .sandbox ? [.sandbox] : (shared ? [.production] : [.production, .sandbox])
        for environment in environments {
            switch await fetchStatuses(transactionID: transactionID, environment: environment) {
            case .failure(let error):
                return .failure(error)
            case .success(.notFound):
                continue
            case .success(.body(let body)):
                let expected: StoreEnvironmentName? =
                    (shared && configuration.environment == .production) ? nil : name(of: environment)
                return await facts(from: body, lookup: transactionID, expected: expected)
            }
        }
        return .success([])
    }

    private func name(of environment: StoreEnvironment) -> StoreEnvironmentName {
        environment == .production ? .production : .sandbox
    }

    func fetchError(_ message: String) -> SourceError {
        SourceError(origin: .appStore, kind: .fetch, message: "App Store Server API: " + message)
    }

    /// Decodes a status response and verifies the signed payloads it uses.
    /// `expected` nil: trust the response's own `environment` (one URL serves both).
    func facts(from body: Data, lookup: String, expected: StoreEnvironmentName?) async -> Result<[StoreFact], SourceError> {
        guard let response = try? AppStoreJSON.decode(StatusResponse.self, from: body) else {
            return .failure(fetchError("malformed subscription status body"))
        }
        guard let environment = expected ?? response.environment.flatMap(StoreEnvironmentName.init(rawValue:)) else {
            return .failure(fetchError("response names no known environment"))
        }
        let items = (response.data ?? []).flatMap { $0.lastTransactions ?? [] }
        let direct = items.filter { $0.originalTransactionId == lookup }
        var verified: [(item: LastTransactionsItem, fact: PurchaseFact, signer: String)] = []
        for item in direct.isEmpty ? items : direct {
            switch await verify(item, environment: environment) {
            case .success(let (fact, signer)): verified.append((item, fact, signer))
            case .failure(let error): return .failure(error)
            }
        }
        var chosen = verified
        if direct.isEmpty {
            let matching = verified.filter { $0.fact.storeTransactionID == lookup || $0.fact.originalTransactionID == lookup }
            if !matching.isEmpty { chosen = matching }
        }
        return .success(chosen.map { StoreFact(lookupID: lookup, purchase: $0.fact, signedBy: $0.signer) })
    }

    private func verify(
        _ item: LastTransactionsItem, environment: StoreEnvironmentName
    ) async -> Result<(PurchaseFact, String), SourceError> {
        guard let signedTransaction = item.signedTransactionInfo else {
            return .failure(fetchError("subscription entry has no signedTransactionInfo"))
        }
        do {
            let (transaction, signer) = try await verifier.verifySignedTransaction(
                signedTransaction, environment: environment, now: now())
            if let claimed = item.originalTransactionId, transaction.originalTransactionId != claimed {
                return .failure(
                    SourceError(
                        origin: .appStore, kind: .verification,
                        message: "signed transaction's original transaction id does not match its entry (\(claimed))"))
            }
            var renewal: JWSRenewalInfoDecodedPayload?
            if let signedRenewal = item.signedRenewalInfo {
                renewal = try await verifier.verifyRenewalInfo(signedRenewal, environment: environment, now: now())
            }
            do {
                return .success(
                    (try AppleSubscriptionMapping.purchaseFact(status: item.status, transaction: transaction, renewal: renewal), signer))
            } catch {
                return .failure(SourceError(origin: .appStore, kind: .verification, message: error.description))
            }
        } catch {
            logger.debug(
                "app store payload failed verification",
                metadata: ["appstore.original_transaction_id": "\(item.originalTransactionId ?? "")", "error": "\(error)"])
            return .failure(SourceError(origin: .appStore, kind: .verification, message: error.description))
        }
    }
}
