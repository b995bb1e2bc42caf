import Foundation
import GooglePlay
import SubreconCore
import SubreconDatabase
import SubreconJob
import Synchronization

/// Google Play as a source: `purchases.subscriptionsv2.get` for every user whose row holds a
/// `google_purchase_token` (SPEC 5.2). 404 is absence (`unknownTo`), 410 evidence the purchase has expired (of the
/// row's product), anything unanswerable an error that leaves the user untouched.
struct GooglePlaySource: StoreSource {
    let client: GooglePlayClient
    let note: String
    /// The voids the feed read this run: a lookup of their line then judges the line refunded (SPEC 5.3).
    let voids = GoogleVoidLedger()

    static func make(_ google: GooglePlayConfiguration, context: SourceContext) throws -> GooglePlaySource? {
        let client: GooglePlayClient
        do {
            client = try GooglePlayClient(
                configuration: google, httpClient: context.httpClient, logger: context.logger, observer: context.stats,
                gate: context.gates[.googlePlay])
        } catch {
            throw ConfigError("GOOGLE_PLAY_SERVICE_ACCOUNT", "cannot be used: \(error)")
        }
        return GooglePlaySource(
            client: client,
            note:
                "Google Play Developer API subscriptionsv2 at \(google.baseURL) for \(google.packageName), by the row's google_purchase_token; voided purchases feed (type=1)"
        )
    }

    func ask(row: UserRow, facts: inout SourceFacts) async {
        let tokens = Self.tokens(of: row)
        guard !tokens.isEmpty else { return }
        var found: [StoreFact] = []
        for token in tokens {
            facts.noteAsked(.googlePlay)
            // The row's product names only the row's own token's purchase (a 410's evidence).
            let hint = token == row.identifiers[.googlePlay] ? row.productID : nil
            switch await client.storeFacts(token: token, productHint: hint) {
            case .success(let google): found += google
            case .failure(let error):
                facts.errors.append(error)
                return
            }
        }
        let keys = found.flatMap { ($0.line?.keys ?? []).map(GooglePlayMapping.orderBase) }
        facts.stores += GooglePlayMapping.applyingVoids(found, voids: voids.naming(keys))
        if found.isEmpty { facts.unknownTo.append(.googlePlay) }
    }

    /// The tokens to ask about: the row's `google_purchase_token`, then the token linked to the user tonight when it
    /// is another (SPEC 5.10: the core then decides a newer token of the same line from a conflict).
    static func tokens(of row: UserRow) -> [String] {
        var tokens: [String] = []
        if let own = row.identifiers[.googlePlay], !own.isEmpty { tokens.append(own) }
        if let linked = row.links[.googlePlay], !linked.isEmpty, !tokens.contains(linked) { tokens.append(linked) }
        return tokens
    }

    var hasFeed: Bool { true }

    /// Google's voided purchases (refunds, chargebacks, cancellations by the developer or Google), subscriptions
    /// included (`type=1`): the purchase tokens they name find users by `google_purchase_token`.
    func feed(since: Date, until: Date) async -> FeedRead? {
        let result = await client.voidedPurchases(since: since, until: until).map { feed in
            voids.add(feed.entries.compactMap(GoogleVoid.init))
            return FeedEntries(
                identifiers: feed.purchaseTokens, entries: feed.entries.count, rejected: feed.rejected,
                // Voids with an order id and a readable voided time, by the purchase token.
                refunds: FeedRefund.of(
                    feed.entries.compactMap { entry in
                        guard let token = entry.purchaseToken, !token.isEmpty, let fact = entry.refundedPurchase else { return nil }
                        return (token, fact)
                    }, asOf: until))
        }
        return FeedRead(source: Self.origin, reason: Self.eventReason, column: FeedColumn(Self.identifierColumns[0]), result: result)
    }
}

/// The voids read from Google's feed during this run, for the lookups that follow it, by purchase token and by
/// order id without its renewal suffix.
final class GoogleVoidLedger: Sendable {
    private let state = Mutex<[String: [GoogleVoid]]>([:])

    func add(_ more: [GoogleVoid]) {
        guard !more.isEmpty else { return }
        state.withLock { byKey in
            for void in more {
                byKey[GooglePlayMapping.orderBase(void.orderID), default: []].append(void)
                if let token = void.token { byKey[token, default: []].append(void) }
            }
        }
    }

    /// The voids naming any of `keys` (tokens, order ids without their suffix), once each.
    func naming(_ keys: [String]) -> [GoogleVoid] {
        state.withLock { byKey in
            var seen = Set<GoogleVoid>()
            return keys.flatMap { byKey[$0] ?? [] }.filter { seen.insert($0).inserted }
        }
    }
}
