import AppStore
import AsyncHTTPClient
import Foundation
import Logging
import RevenueCat
import SourceHTTP
import SubreconCore

/// The production `FactSource`: RevenueCat for every user, then, when Apple is configured and the user has an
/// App Store subscription, one App Store Server API lookup whose verified facts override RevenueCat's.
public struct StoreFactSource: FactSource {
    public let revenueCat: RevenueCatClient
    public let appStore: AppStoreClient?
    /// The legacy `verifyReceipt` bridge; nil when not configured.
    public let receiptVerifier: ReceiptVerifier?
    /// Stored receipts and which rows hold which Apple original transaction id.
    let receipts: (any ReceiptLookup)?
    /// One line per source for the summary ("says so in the summary" when Apple is not configured).
    public let notes: [String: String]

    /// - Parameters:
    ///   - revenueCatGate, appStoreGate: shared rate limiters (nil: unpaced), one per source for the whole run.
    ///   - receipts: where stored legacy receipts are read (the bridge runs only with `APPLE_SHARED_SECRET`).
    public init(
        configuration: SubreconConfiguration, httpClient: HTTPClient, stats: RequestStats, logger: Logger,
        revenueCatGate: (any RequestGate)? = nil, appStoreGate: (any RequestGate)? = nil,
        receipts: (any ReceiptLookup)? = nil
    ) throws {
        guard let revenueCatConfiguration = configuration.revenueCat else {
            throw ConfigError("REVENUECAT_API_KEY", "is not set (RevenueCat secret API key; or REVENUECAT_API_KEY_FILE)")
        }
        revenueCat = RevenueCatClient(
            httpClient: httpClient, configuration: revenueCatConfiguration, logger: logger, observer: stats,
            gate: revenueCatGate)
        var notes = ["revenuecat": "v1 REST at \(revenueCatConfiguration.baseURL)"]
        if let apple = configuration.appStore {
            do {
                appStore = try AppStoreClient(
                    configuration: apple, httpClient: httpClient, logger: logger, observer: stats, gate: appStoreGate)
            } catch {
                throw ConfigError("APP_STORE_PRIVATE_KEY", "cannot be used to sign App Store requests: \(error)")
            }
            notes["app_store"] =
                "App Store Server API (\(apple.environment.rawValue)), signed payloads verified against \(apple.rootCertificates.count) trusted root(s)"
        } else {
            appStore = nil
            notes["app_store"] = "not configured: App Store subscriptions judged on RevenueCat alone"
        }
        self.receipts = receipts
        if let receiptConfiguration = configuration.receipts, receipts != nil {
            receiptVerifier = ReceiptVerifier(configuration: receiptConfiguration, httpClient: httpClient, logger: logger, observer: stats)
            notes["app_store_receipt"] =
                "legacy verifyReceipt at \(receiptConfiguration.productionURL) for App Store users known only by a stored receipt"
        } else {
            receiptVerifier = nil
        }
        self.notes = notes
    }

    public func facts(for row: UserRow) async -> SourceFacts {
        var facts = await revenueCat.facts(for: row.id)
        guard facts.errors.isEmpty else { return facts }
        var lookup = Self.appStoreLookup(row: row, facts: facts)
        if lookup == nil, Self.isAppStoreCandidate(row: row, facts: facts) {
            switch await receiptLookup(row: row, facts: &facts) {
            case .untouched: break
            case .revealed(let id): lookup = id
            case .settled: return facts
            }
        }
        if let appStore, let lookup {
            switch await appStore.subscriptionFacts(transactionID: lookup) {
            case .success(let apple):
                facts.apple = apple
                if apple.isEmpty { facts.unknownTo.append(.appStore) }
            case .failure(let error): facts.errors.append(error)
            }
        }
        await checkBindings(row: row, facts: &facts)
        return facts
    }

    /// An Apple original transaction id the sources revealed for this user, but that another user's row already
    /// holds, is a conflict for a person to look at: never written to this row.
    func checkBindings(row: UserRow, facts: inout SourceFacts) async {
        guard let receipts, facts.errors.isEmpty else { return }
        let revealed = Set(
            (facts.apple.map(\.purchase) + facts.purchases.filter { $0.store.isApple })
                .compactMap(\.originalTransactionID)
                .filter { !$0.isEmpty && $0 != row.originalTransactionID })
        for id in revealed.sorted() {
            do {
                let others = try await receipts.otherUsers(holdingOriginalTransactionID: id, besides: row.id)
                if !others.isEmpty {
                    facts.errors.append(
                        SourceError(
                            origin: .appStore, kind: .conflict,
                            message: "original transaction id \(id) is already bound to another user's row (\(others.joined(separator: ", "))); not written to this one"))
                }
            } catch {
                facts.errors.append(
                    SourceError(origin: .appStore, kind: .fetch, message: "could not check who holds original transaction id \(id)"))
            }
        }
    }

    /// The transaction id to ask Apple about: the row's original transaction id, else the most recent App Store
    /// subscription RevenueCat knows. Nil when the user has no App Store subscription (one call per user at most:
    /// Apple answers for every subscription group of the customer).
    static func appStoreLookup(row: UserRow, facts: SourceFacts) -> String? {
        if let id = row.originalTransactionID, !id.isEmpty { return id }
        return facts.purchases
            .filter { $0.isAppStoreSubscription && $0.storeTransactionID != nil }
            .max { ($0.purchaseDate ?? .distantPast) < ($1.purchaseDate ?? .distantPast) }?
            .storeTransactionID
    }
}
