import Foundation

// The absence rule per purchase line (CONTRACT "Whose purchase it is"): which facts may end the tier a row states.

extension Decision {
    /// The absence rule per line (CONTRACT "Whose purchase it is"): without RevenueCat's full answer, a truth below the row's tier stands only
    /// when a store stated the end of the row's own line; otherwise the user is `unknown_at_source`, untouched.
    static func absence(row: UserRow, truth: Entitlement, facts: SourceFacts, evidence: Evidence, conflicts: [SourceConflict]) -> Verdict? {
        guard truth.tier < row.currentTier, !facts.revenueCatKnowsSubscriber,
            !evidence.considered.contains(where: { endsRowLine($0.purchase, $0.judgement, row: row) })
        else { return nil }
        return Verdict(
            row: row, truth: nil, action: .skipped, sources: facts.asked, drift: evidence.drift.union([.unknownAtSource]).sorted(),
            conflicts: conflicts,
            error: .unknownAtSource(asked: facts.asked, unknownTo: facts.unknownTo, lineTier: row.currentTier))
    }

    /// True when `purchase`, judged not entitled, is positive evidence that the line which granted the row's tier has
    /// ended: a store's own fact (never RevenueCat's, which is believed only when it answered in full) about the row's
    /// own line. The row names its line by the Apple original transaction id or a store identifier that names a line
    /// (`FactOrigin.identifierNamesLine`); without one (a column naming a customer), a line of the row's store and product is the row's unless its last
    /// period began more than a year before the end the row states (then the tier came from elsewhere).
    static func endsRowLine(_ purchase: PurchaseFact, _ judgement: PurchaseJudgement, row: UserRow) -> Bool {
        guard !judgement.entitled, purchase.origin != .revenueCat, let authority = purchase.origin.authorityStore,
            family(authority) == family(purchase.store)
        else { return false }
        if let source = row.source, family(StoreKind(subscriptionSource: source)) != family(purchase.store) { return false }
        if purchase.store.isApple, let key = row.originalTransactionID, !key.isEmpty {
            return purchase.purchaseLine?.keys.contains(key) == true
        }
        if purchase.origin.identifierNamesLine, let key = row.identifiers[purchase.origin] {
            return purchase.purchaseLine?.keys.contains(key) == true
        }
        if let product = row.productID, !sameProduct(purchase, product) { return false }
        // A period lasts at most a year (no store bills a longer one): a line whose last period began more than that
        // before the end the row states never granted it (a subscription canceled years ago).
        if let start = purchase.purchaseDate, let rowEnd = row.endDate, rowEnd > start.addingTimeInterval(longestPeriod) {
            return false
        }
        return true
    }

    /// A refund or revocation is a fact about its line, not about the one transaction that states it (CONTRACT "Deciding
    /// the truth"): a one-time line (non-expiring) has one period, so every fact of it ends revoked when any of them
    /// states a refund at or before `asOf` or a revocation, whatever its other transactions say (a restore of a revoked
    /// purchase is still revoked). A subscription line keeps `judge`'s rule: a refund counts for the period it falls in.
    static func applyingLineRefunds(_ purchases: [PurchaseFact], asOf: Date) -> [PurchaseFact] {
        let refunds = purchases.compactMap { fact -> (line: PurchaseLine, at: Date?)? in
            guard fact.kind == .nonExpiring, let line = fact.purchaseLine else { return nil }
            // A refund dated before the purchase it is stated on is about no period of it (`judge`'s rule).
            if let at = fact.refundedAt, at <= asOf, fact.purchaseDate.map({ at >= $0 }) ?? true { return (line, at) }
            return fact.storeState == .revoked ? (line, nil) : nil
        }
        guard !refunds.isEmpty else { return purchases }
        return purchases.map { fact in
            guard fact.kind == .nonExpiring, let line = fact.purchaseLine else { return fact }
            let same = refunds.filter { $0.line.isSame(as: line) }
            guard !same.isEmpty else { return fact }
            var carried = fact
            carried.storeState = .revoked
            carried.refundedAt = same.compactMap(\.at).max() ?? fact.refundedAt
            return carried
        }
    }

    /// The `iap_original_transaction_id` a change writes (CONTRACT "Database", "Whose purchase it is": columns keep their meaning): an App Store
    /// purchase's original transaction id; for any other store the row's value.
    static func appleOriginalTransactionID(_ purchase: PurchaseFact, row: UserRow) -> String? {
        guard purchase.store.isApple else { return row.originalTransactionID }
        return purchase.originalTransactionID ?? row.originalTransactionID
    }
}

/// 366 days: no store bills a period longer than a year.
private let longestPeriod: TimeInterval = 366 * 86_400

extension Decision {
    fileprivate static func family(_ store: StoreKind) -> StoreKind { store.isApple ? .appStore : store }

    fileprivate static func sameProduct(_ purchase: PurchaseFact, _ product: String) -> Bool {
        let base = product.split(separator: ":", maxSplits: 1).first.map(String.init) ?? product
        return ([purchase.productID] + purchase.alternateProductIDs).contains { $0 == product || $0 == base }
    }
}
