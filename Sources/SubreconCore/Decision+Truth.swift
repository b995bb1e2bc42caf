import Foundation

// The truth at T, and what it changes in the row: the action, the drift kinds and the push intents.

extension Decision {
    /// The truth at T (CONTRACT "Sources and the decision", per user) and the purchase it is about: the granting purchase; with nothing entitled,
    /// the most recent purchase (`refunded` or `paused` when it is, else `expired`); with no purchase at all, tier 0.
    static func truthAndPurchase(
        row: UserRow, granting: Granting?, considered: [(purchase: PurchaseFact, judgement: PurchaseJudgement)], asOf: Date
    ) -> (Entitlement, PurchaseFact?) {
        if let granting, granting.tier > 0 {
            let purchase = granting.purchase
            let status = granting.judgement.status
            let truth = Entitlement(
                tier: granting.tier, status: status, endDate: purchase.isLifetime ? nil : purchase.expiresDate,
                graceEndsAt: status == .billingIssue ? purchase.gracePeriodExpiresDate.flatMap { $0 > asOf ? $0 : nil } : nil,
                source: purchase.store.subscriptionSource, productID: purchase.productID,
                originalTransactionID: appleOriginalTransactionID(purchase, row: row),
                autoRenew: purchase.isLifetime ? false : (purchase.autoRenew ?? row.autoRenew))
            return (truth, purchase)
        }
        if let recent = considered.max(by: { recency($0.purchase) < recency($1.purchase) }) {
            let status: SubscriptionStatus =
                switch recent.judgement.status {
                case .refunded, .paused: recent.judgement.status
                default: .expired
                }
            let purchase = recent.purchase
            let truth = Entitlement(
                tier: 0, status: status, endDate: purchase.expiresDate ?? (purchase.isLifetime ? nil : row.endDate),
                graceEndsAt: nil, source: purchase.store.subscriptionSource, productID: purchase.productID,
                originalTransactionID: appleOriginalTransactionID(purchase, row: row),
                autoRenew: purchase.autoRenew ?? row.autoRenew)
            return (truth, purchase)
        }
        // A known subscriber with nothing to go on: not entitled; the rest of the row stays as it was.
        let truth = Entitlement(
            tier: 0, status: row.status == SubscriptionStatus.none && row.currentTier == 0 ? .none : .expired,
            endDate: row.endDate, graceEndsAt: nil, source: row.source, productID: row.productID,
            originalTransactionID: row.originalTransactionID, autoRenew: row.autoRenew)
        return (truth, nil)
    }

    static func endKey(_ purchase: PurchaseFact) -> Date {
        guard !purchase.isLifetime, let expires = purchase.expiresDate else { return .distantFuture }
        return max(expires, purchase.gracePeriodExpiresDate ?? .distantPast)
    }

    fileprivate static func recency(_ purchase: PurchaseFact) -> (Date, Date) {
        (purchase.purchaseDate ?? purchase.expiresDate ?? .distantPast, purchase.expiresDate ?? .distantFuture)
    }

    /// Dates are compared to the whole second: RevenueCat v1 reports whole seconds while webhook handlers
    /// store milliseconds, and a sub-second difference is no drift.
    fileprivate static func wholeSeconds(_ date: Date) -> Double { date.timeIntervalSince1970.rounded(.down) }

    fileprivate static func sameInstant(_ a: Date?, _ b: Date?) -> Bool {
        switch (a, b) {
        case (nil, nil): true
        case (let a?, let b?): wholeSeconds(a) == wholeSeconds(b)
        default: false
        }
    }

    fileprivate static func isLater(_ truth: Date?, than db: Date?) -> Bool {
        guard let truth, let db else { return false }
        return wholeSeconds(truth) > wholeSeconds(db)
    }

    static func differs(_ before: Entitlement, _ truth: Entitlement) -> Bool {
        before.tier != truth.tier || before.status != truth.status || !sameInstant(before.endDate, truth.endDate)
            || !sameInstant(before.graceEndsAt, truth.graceEndsAt) || before.source != truth.source
            || before.productID != truth.productID || before.originalTransactionID != truth.originalTransactionID
            || before.autoRenew != truth.autoRenew || before.storeIdentifiers != truth.storeIdentifiers
    }

    static func action(before: Entitlement, truth: Entitlement) -> Action {
        if truth.tier < before.tier { return .downgrade }
        if truth.tier > before.tier { return before.tier == 0 ? .restore : .upgrade }
        if truth.tier > 0 && isLater(truth.endDate, than: before.endDate) { return .extend }
        return differs(before, truth) ? .statusChange : .none
    }

    static func driftKinds(before: Entitlement, truth: Entitlement) -> Set<Drift> {
        var kinds = Set<Drift>()
        if before.tier > 0 && truth.tier == 0 {
            switch truth.status {
            case .refunded: kinds.insert(.missedRefund)
            default: kinds.insert(before.status == .billingIssue ? .graceExpired : .missedExpiration)
            }
        }
        if truth.status == .refunded && before.status != .refunded { kinds.insert(.missedRefund) }
        if truth.tier > 0 {
            if before.tier == 0 || isLater(truth.endDate, than: before.endDate) { kinds.insert(.missedRenewal) }
            if before.status != .billingIssue && truth.status == .billingIssue { kinds.insert(.billingIssueEntered) }
            if before.status == .billingIssue && (truth.status == .active || truth.status == .canceled) {
                kinds.insert(.billingIssueRecovered)
            }
            if let old = before.productID, let new = truth.productID, old != new { kinds.insert(.productChange) }
        }
        return kinds
    }

    static func pushIntents(userID: String, before: Entitlement, truth: Entitlement) -> [PushIntent] {
        var intents: [PushIntent] = []
        func add(_ kind: PushIntentKind, tier: Int) {
            intents.append(PushIntent(userID: userID, kind: kind, periodEnd: truth.endDate, productID: truth.productID, tier: tier))
        }
        if truth.status == .billingIssue && before.status != .billingIssue { add(.billingIssue, tier: truth.tier) }
        if before.tier > 0 && truth.tier == 0 {
            if truth.status == .refunded { add(.refunded, tier: 0) }
            if truth.status == .expired { add(.expired, tier: 0) }
        }
        if before.tier == 0 && truth.tier > 0 { add(.restored, tier: truth.tier) }
        return intents
    }
}
