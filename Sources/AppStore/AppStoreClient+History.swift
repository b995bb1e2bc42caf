import Foundation
import Logging
import SubreconCore

extension AppStoreClient {
    /// The environments a lookup asks in order, each with the environment its payloads must state (nil: one URL
    /// serves both, so the answer's own `environment` is trusted as the one to verify against).
    func lookupEnvironments() -> [(environment: StoreEnvironment, expected: StoreEnvironmentName?)] {
        let shared = configuration.baseURL(for: .production) == configuration.baseURL(for: .sandbox)
        if configuration.environment == .sandbox { return [(.sandbox, .sandbox)] }
        return shared ? [(.production, nil)] : [(.production, .production), (.sandbox, .sandbox)]
    }

    /// Apple's verified non-consumable purchases of the customer `transactionID` (any of their transaction ids)
    /// belongs to (CONTRACT "Sources and the decision"), as non-expiring facts (`AppleNonConsumableMapping`).
    ///
    /// `GET /inApps/v2/history/{transactionId}?productType=NON_CONSUMABLE`, every page (`revision` while `hasMore`,
    /// the same query repeated), at most `HistoryResponse.maxPages`; production first and sandbox on 4040010 as the
    /// status lookup does. Every signed transaction is verified like the subscription path's (x5c chain, OIDs,
    /// ES256, bundle id, environment). An id Apple knows in no environment asked is an empty answer (absence); a
    /// failed request, a malformed or cut-off page, or a payload that fails verification is an error: the user is
    /// left untouched.
    public func nonConsumableFacts(transactionID: String) async -> Result<[StoreFact], SourceError> {
        for (environment, expected) in lookupEnvironments() {
            switch await historyTransactions(transactionID: transactionID, environment: environment, expected: expected) {
            case .failure(let error): return .failure(error)
            case .success(nil): continue
            case .success(let transactions?):
                return AppleNonConsumableMapping.storeFacts(transactions, lookup: transactionID)
            }
        }
        return .success([])
    }

    /// Every verified transaction of the history in one environment; nil when Apple does not know the id there.
    func historyTransactions(
        transactionID: String, environment: StoreEnvironment, expected: StoreEnvironmentName?
    ) async -> Result<[(payload: JWSTransactionDecodedPayload, signer: String?)]?, SourceError> {
        let base =
            configuration.baseURL(for: environment) + "/inApps/v2/history/" + Self.pathSegment(transactionID)
            + "?productType=NON_CONSUMABLE"
        var transactions: [(payload: JWSTransactionDecodedPayload, signer: String?)] = []
        var revision: String?
        var seen = Set<String>()
        var pageEnvironment = expected
        for page in 1...(HistoryResponse.maxPages + 1) {
            guard page <= HistoryResponse.maxPages else {
                return .failure(fetchError("transaction history incomplete: more than \(HistoryResponse.maxPages) pages"))
            }
            let url = base + (revision.map { "&revision=" + ($0.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? $0) } ?? "")
            let body: Data
            switch await fetch(url: url, environment: environment) {
            case .failure(let error): return .failure(error)
            case .success(.notFound):
                if page == 1 { return .success(nil) }
                return .failure(fetchError("transaction history incomplete: a later page answered 4040010"))
            case .success(.body(let data)): body = data
            }
            guard let response = try? HistoryResponse.decode(body: body) else {
                return .failure(fetchError("transaction history: malformed body"))
            }
            let stated = response.environment.flatMap(StoreEnvironmentName.init(rawValue:))
            guard let named = pageEnvironment ?? stated, response.environment == nil || stated == named else {
                return .failure(fetchError("transaction history names no known environment, or another one than asked"))
            }
            pageEnvironment = named
            for signed in response.signedTransactions ?? [] {
                do {
                    let (payload, signer) = try await verifier.verifySignedTransaction(signed, environment: named, now: now())
                    transactions.append((payload, signer))
                } catch {
                    logger.debug("app store history transaction failed verification", metadata: ["error": "\(error)"])
                    return .failure(SourceError(origin: .appStore, kind: .verification, message: error.description))
                }
            }
            switch response.next(bundleID: configuration.bundleID, seen: &seen) {
            case .failure(let error): return .failure(error)
            case .success(nil): return .success(transactions)
            case .success(let next?): revision = next
            }
        }
        return .failure(fetchError("transaction history incomplete"))
    }
}
