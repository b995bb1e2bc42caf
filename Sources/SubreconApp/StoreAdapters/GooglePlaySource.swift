import Foundation
import GooglePlay
import SubreconCore
import SubreconJob
import SubreconPorts

/// Google Play as a source: `purchases.subscriptionsv2.get` for every user whose row holds a
/// `google_purchase_token` (CONTRACT "Sources and the decision"); `purchases.products.get` for that token when it names a one-time product
/// (CONTRACT "Sources and the decision"): first when RevenueCat lists the row's `iap_product_id` as a Play Store non-subscription, else only
/// after the subscription lookup answered 404, with the row's product and RevenueCat's one-time Play Store products
/// (at most `maxProductLookups`): a subscriber costs no extra request. 404 is absence (`unknownTo`), 410 evidence the purchase has expired (of the
/// row's product), anything unanswerable an error that leaves the user untouched.
struct GooglePlaySource: StoreSource {
    let client: GooglePlayClient
    let note: String
    /// The refunds kept on earlier nights: a void an earlier night's feed read still names its line when Google's
    /// own answer says only `EXPIRED` tonight (the user's lookup failed that night, or came later).
    var refundsSeen: (any RefundsSeenLookup)? = nil

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
                "Google Play Developer API subscriptionsv2 at \(google.baseURL) for \(google.packageName), by the row's google_purchase_token; voided purchases feed (type=1)",
            refundsSeen: context.refundsSeen)
    }

    func ask(row: UserRow, facts: inout SourceFacts) async {
        let tokens = Self.tokens(of: row)
        guard !tokens.isEmpty else { return }
        facts.noteAsked(.googlePlay)
        let oneTime = Self.oneTimeProducts(row: row, facts: facts)
        var found: [StoreFact] = []
        for token in tokens {
            // The row's product names only the row's own token's purchase (a 410's evidence).
            let hint = token == row.identifiers[.googlePlay] ? row.productID : nil
            switch await lookUp(token: token, productHint: hint, oneTime: oneTime) {
            case .success(let google): found += google
            case .failure(let error):
                facts.errors.append(error)
                return
            }
        }
        switch await earlierVoids(of: row, found: found) {
        case .success(let earlier):
            facts.stores += GooglePlayMapping.applyingVoids(found, voids: Self.tonightsVoids(of: row, found: found) + earlier)
        case .failure(let error):
            facts.errors.append(error)
            return
        }
        if found.isEmpty { facts.unknownTo.append(.googlePlay) }
    }

    /// The voids tonight's feed stated for the tokens this user's row holds, which travel with the row
    /// (`UserRow.feedRefunds`; a resumed run's carry their order, not their token), and those of tokens no row holds
    /// that Google's answers name by their lines' own keys (`UserRow.unclaimedFeedRefunds`: the `linkedPurchaseToken` a
    /// resubscription replaced, an order of the line; none in a resumed run): a lookup of their line then judges the
    /// line refunded, fail-closed as `GooglePlayMapping.applyingVoids` says (CONTRACT "Sources and the decision").
    static func tonightsVoids(of row: UserRow, found: [StoreFact]) -> [GoogleVoid] {
        let held = row.feedRefunds.filter { $0.refund.store == StoreKind.playStore.rawValue }
        let keys = Set(found.flatMap { $0.line?.keys ?? [] })
        let unclaimed = row.unclaimedFeedRefunds.naming(keys, store: .playStore)
        var seen = Set<GoogleVoid>()
        return (held + unclaimed).map {
            GoogleVoid(token: $0.identifier, orderID: $0.refund.transactionID, voidedAt: $0.refund.refundedAt)
        }.filter { seen.insert($0).inserted }
    }

    /// The voids earlier nights kept for this user (`refunds_seen`, by order id), read only when Google says a line
    /// is over: they can then only tell why it ended (refunded, not expired), never end a live line. An unreadable
    /// store of them is this user's error (untouched), never a night without them.
    func earlierVoids(of row: UserRow, found: [StoreFact]) async -> Result<[GoogleVoid], SourceError> {
        guard let refundsSeen, found.contains(where: { $0.purchase.storeState == .expired }) else { return .success([]) }
        do {
            let kept = try await refundsSeen.refundsSeen(userID: row.id, store: StoreKind.playStore.rawValue, limit: 100)
            return .success(kept.map { GoogleVoid(token: nil, orderID: $0.transactionID, voidedAt: $0.refundedAt) })
        } catch {
            return .failure(
                SourceError(origin: .googlePlay, kind: .fetch, message: "the refunds kept on earlier nights could not be read"))
        }
    }

    /// One token's facts: as a subscription, else (a 404, or a product RevenueCat lists as one-time) as a one-time
    /// product named by `productHint` or RevenueCat's one-time products (CONTRACT "Sources and the decision"); empty when Google knows neither.
    func lookUp(token: String, productHint: String?, oneTime: [String]) async -> Result<[StoreFact], SourceError> {
        var google: [StoreFact] = []
        // The row's product is one RevenueCat lists as a one-time purchase: the token is a product's, not a subscription's.
        let productFirst = productHint.map(oneTime.contains) == true
        if !productFirst {
            switch await client.storeFacts(token: token, productHint: productHint) {
            case .success(let found): google = found
            case .failure(let error): return .failure(error)
            }
        }
        // Not a subscription token Google knows (404): a one-time product's, when a product id names it (CONTRACT "Sources and the decision").
        guard google.isEmpty else { return .success(google) }
        for product in ([productHint].compactMap { $0 } + oneTime).uniqued().prefix(Self.maxProductLookups) where !product.isEmpty {
            switch await client.productFacts(productID: product, token: token) {
            case .success(let found): google = found
            case .failure(let error): return .failure(error)
            }
            if !google.isEmpty { break }
        }
        return .success(google)
    }

    /// The tokens to ask about: the row's `google_purchase_token`, then the token linked to the user tonight when it
    /// is another (CONTRACT "Whose purchase it is": the core then decides a newer token of the same line from a conflict).
    static func tokens(of row: UserRow) -> [String] {
        var tokens: [String] = []
        if let own = row.identifiers[.googlePlay], !own.isEmpty { tokens.append(own) }
        if let linked = row.links[.googlePlay], !linked.isEmpty, !tokens.contains(linked) { tokens.append(linked) }
        return tokens
    }

    /// Product ids a token is asked about as a one-time product, at most.
    static let maxProductLookups = 3

    /// The product ids of RevenueCat's Play Store purchases that are not subscriptions (`non_subscriptions`).
    static func oneTimeProducts(row: UserRow, facts: SourceFacts) -> [String] {
        facts.revenueCatPurchases.filter { $0.store == .playStore && $0.kind != .subscription && !$0.productID.isEmpty }.map(\.productID)
            .uniqued()
    }

    var hasFeed: Bool { true }

    /// Google's voided purchases (refunds, chargebacks, cancellations by the developer or Google), subscriptions
    /// included (`type=1`): the purchase tokens they name find users by `google_purchase_token`.
    func feed(since: Date, until: Date) async -> FeedRead? {
        let result = await client.voidedPurchases(since: since, until: until).map { feed in
            FeedEntries(
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

extension Array where Element: Hashable {
    /// The elements once each, in order.
    fileprivate func uniqued() -> [Element] {
        var seen = Set<Element>()
        return filter { seen.insert($0).inserted }
    }
}
