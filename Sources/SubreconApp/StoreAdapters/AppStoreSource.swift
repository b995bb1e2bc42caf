import AppStore
import Foundation
import SubreconCore
import SubreconJob
import SubreconPorts

/// Apple as a source: the App Store Server API (verified JWS) and the legacy `verifyReceipt` bridge for users known
/// only by a stored receipt. Users are asked about by the row's `iap_original_transaction_id`, else RevenueCat's
/// most recent App Store transaction, else (bridge) the transaction a stored receipt reveals. The customer's
/// non-consumables are read from the transaction history when the row's purchase is not a subscription Apple knows
/// (`asksNonConsumables`).
struct AppStoreSource: StoreSource {
    /// Named by Apple's notification history.
    static let eventReason = CandidateReason.feed("apple_notification")
    static var feedReason: CandidateReason? { eventReason }
    let appStore: AppStoreClient?
    /// The legacy `verifyReceipt` bridge; nil when not configured.
    let receiptVerifier: ReceiptVerifier?
    /// Stored receipts and which rows hold which Apple original transaction id.
    let receipts: (any ReceiptLookup)?
    let note: String

    static func make(_ configuration: AppleConfiguration, context: SourceContext) throws -> AppStoreSource? {
        var notes: [String] = []
        var appStore: AppStoreClient?
        if let apple = configuration.appStore {
            do {
                appStore = try AppStoreClient(
                    configuration: apple, httpClient: context.httpClient, logger: context.logger, observer: context.stats,
                    gate: context.gates[.appStore])
            } catch {
                throw ConfigError("APP_STORE_PRIVATE_KEY", "cannot be used to sign App Store requests: \(error)")
            }
            notes.append(
                "App Store Server API (\(apple.environment.rawValue)), signed payloads verified against \(apple.rootCertificates.count) trusted root(s)"
            )
        }
        var verifier: ReceiptVerifier?
        if let receiptConfiguration = configuration.receipts, context.receipts != nil {
            verifier = ReceiptVerifier(
                configuration: receiptConfiguration, httpClient: context.httpClient, logger: context.logger, observer: context.stats)
            notes.append("legacy verifyReceipt at \(receiptConfiguration.productionURL) for App Store users known only by a stored receipt")
        }
        guard appStore != nil || verifier != nil else { return nil }
        return AppStoreSource(
            appStore: appStore, receiptVerifier: verifier, receipts: context.receipts, note: notes.joined(separator: "; "))
    }

    func ask(row: UserRow, facts: inout SourceFacts) async {
        var lookup = Self.appStoreLookup(row: row, facts: facts)
        if lookup == nil, Self.isAppStoreCandidate(row: row, facts: facts) {
            switch await receiptLookup(row: row, facts: &facts) {
            case .untouched: break
            case .revealed(let id): lookup = id
            case .settled:
                await checkBindings(row: row, facts: &facts)
                return
            }
        }
        let linked = row.links[.appStore].flatMap { $0.isEmpty || $0 == lookup ? nil : $0 }
        if let appStore, let asked = lookup ?? Self.oneTimeLookup(facts) ?? linked {
            facts.noteAsked(.appStore)
            var apple: [StoreFact] = []
            var failed = false
            // The row's (or RevenueCat's) transaction, and the original transaction linked to the user tonight when it
            // is another (CONTRACT "Whose purchase it is": the core then decides a newer purchase from a conflict).
            // Then RevenueCat's latest App Store transaction when no answer so far is about its line: the purchase that
            // may grant the tier now (CONTRACT "Whose purchase it is" `stale_identifier`: the row names an older original transaction).
            var queue = [lookup, linked].compactMap { $0 }
            var newer = lookup == nil ? nil : Self.revenueCatLatest(facts)
            while !failed, let id = queue.first ?? newer {
                if queue.isEmpty { newer = nil } else { queue.removeFirst() }
                switch await appStore.subscriptionFacts(transactionID: id) {
                case .success(let found): apple += found
                case .failure(let error):
                    facts.errors.append(error)
                    failed = true
                }
                if let latest = newer, apple.contains(where: { $0.identifiers.contains(latest) || $0.line?.keys.contains(latest) == true })
                {
                    newer = nil
                }
            }
            // The customer's non-consumables (CONTRACT "Sources and the decision"), when the row's purchase is not a subscription Apple knows.
            if !failed, Self.asksNonConsumables(row: row, facts: facts, subscriptions: apple, lookup: lookup) {
                switch await appStore.nonConsumableFacts(transactionID: asked) {
                case .success(let found): apple += found
                case .failure(let error):
                    facts.errors.append(error)
                    failed = true
                }
            }
            if !failed {
                facts.stores += apple
                if apple.isEmpty { facts.unknownTo.append(.appStore) }
            }
        }
        await checkBindings(row: row, facts: &facts)
    }

    var hasFeed: Bool { appStore != nil }

    /// Apple's notification history (needs the App Store Server API): the original transaction ids it names.
    func feed(since: Date, until: Date) async -> FeedRead? {
        guard let appStore else { return nil }
        let result = await appStore.notificationHistory(since: since, until: until).map { feed in
            FeedEntries(
                identifiers: feed.entries.map(\.originalTransactionID), entries: feed.entries.count, rejected: feed.rejected,
                // `REFUND`/`REVOKE` entries, by the original transaction id.
                refunds: FeedRefund.of(
                    feed.entries.compactMap { entry in entry.refundedPurchase.map { (entry.originalTransactionID, $0) } },
                    asOf: until),
                purchases: feed.statedPurchases.map { UnlinkedPurchase(origin: .appStore, identifier: $0.key, purchase: $0.purchase) })
        }
        return FeedRead(source: Self.origin, reason: Self.eventReason, column: .appleOriginalTransactionID, result: result)
    }

    /// An Apple original transaction id the sources revealed for this user, but that another user's row already
    /// holds, is a conflict for a person to look at: never written to this row. A line RevenueCat lists in this
    /// user's answer is theirs (CONTRACT "Whose purchase it is": RevenueCat attributes it, as after a `TRANSFER`):
    /// another row's identifier never blocks its owner.
    func checkBindings(row: UserRow, facts: inout SourceFacts) async {
        guard let receipts, facts.errors.isEmpty else { return }
        // Lines RevenueCat itself states (its store transaction id): the receipt bridge's guess of an original
        // transaction for an entry that states none is no attribution.
        let attributed = facts.revenueCatPurchases.filter { $0.origin == .revenueCat && $0.store.isApple && $0.storeTransactionID != nil }
            .compactMap(\.purchaseLine)
        let revealed = Set(
            facts.stores.filter { $0.purchase.store.isApple }
                .filter { fact in !attributed.contains { line in fact.line.map(line.isSame) ?? false } }
                .compactMap(\.purchase.originalTransactionID)
                .filter { !$0.isEmpty && $0 != row.originalTransactionID })
        await recordTransfers(row: row, facts: &facts, receipts: receipts, attributed: attributed)
        await checkOwnLine(row: row, facts: &facts, receipts: receipts, attributed: attributed)
        for id in revealed.sorted() {
            guard let others = await Self.holders(of: id, besides: row, receipts: receipts, facts: &facts), !others.isEmpty else {
                continue
            }
            facts.errors.append(
                SourceError(
                    origin: .appStore, kind: .conflict,
                    message:
                        "original transaction id \(id) is already bound to another user's row (\(others.joined(separator: ", "))); not written to this one"
                ))
        }
    }

    /// The other rows that name original transaction `id`, sorted; nil when the lookup failed, which is then this
    /// user's `fetch` error (who holds a line is unknown, so nothing is decided from it).
    static func holders(of id: String, besides row: UserRow, receipts: any ReceiptLookup, facts: inout SourceFacts) async -> [String]? {
        do {
            return try await receipts.otherUsers(holdingOriginalTransactionID: id, besides: row.id).sorted()
        } catch {
            facts.errors.append(
                SourceError(origin: .appStore, kind: .fetch, message: "could not check who holds original transaction id \(id)"))
            return nil
        }
    }

    /// The original transactions of lines RevenueCat lists for this user that other rows name: this user owns them
    /// (a transfer), and each of those rows is `ownership_conflict` for the night (`LineTransfer`).
    func recordTransfers(row: UserRow, facts: inout SourceFacts, receipts: any ReceiptLookup, attributed: [PurchaseLine]) async {
        let owned = Set(
            facts.stores.filter { $0.purchase.store.isApple }
                .filter { fact in attributed.contains { line in fact.line.map(line.isSame) ?? false } }
                .compactMap(\.purchase.originalTransactionID)
                .filter { !$0.isEmpty })
        for id in owned.sorted() {
            guard let others = await Self.holders(of: id, besides: row, receipts: receipts, facts: &facts), !others.isEmpty else {
                continue
            }
            facts.transfers.append(LineTransfer(origin: .appStore, identifier: id, owner: row.id, holders: others))
        }
    }

    /// The row's own original transaction when RevenueCat answered in full without listing its line while other rows
    /// name it: the line is not known to be this user's (RevenueCat attributes it elsewhere, as after a transfer), so
    /// the row is `ownership_conflict`, untouched and listed (`SourceFacts.claimedElsewhere`).
    func checkOwnLine(row: UserRow, facts: inout SourceFacts, receipts: any ReceiptLookup, attributed: [PurchaseLine]) async {
        guard facts.asked.contains(.revenueCat), let own = row.originalTransactionID, !own.isEmpty,
            !attributed.contains(where: { $0.keys.contains(own) }),
            !facts.stores.contains(where: { fact in
                fact.line?.keys.contains(own) == true && attributed.contains { line in fact.line.map(line.isSame) ?? false }
            })
        else { return }
        if let others = await Self.holders(of: own, besides: row, receipts: receipts, facts: &facts), !others.isEmpty {
            facts.claimedElsewhere[own] = others
        }
    }

    /// The transaction id to ask Apple about: the row's original transaction id, else the most recent App Store
    /// subscription RevenueCat knows. Nil when the user has no App Store subscription (one call per user at most:
    /// Apple answers for every subscription group of the customer).
    static func appStoreLookup(row: UserRow, facts: SourceFacts) -> String? {
        if let id = row.originalTransactionID, !id.isEmpty { return id }
        return revenueCatLatest(facts)
    }

    /// RevenueCat's latest App Store subscription transaction id, when it states one.
    static func revenueCatLatest(_ facts: SourceFacts) -> String? {
        facts.revenueCatPurchases
            .filter { $0.isAppStoreSubscription && $0.storeTransactionID != nil }
            .max { ($0.purchaseDate ?? .distantPast) < ($1.purchaseDate ?? .distantPast) }?
            .storeTransactionID
    }
}
