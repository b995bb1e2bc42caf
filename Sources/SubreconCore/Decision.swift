import Foundation

/// Which purchases may entitle: a production run ignores sandbox purchases.
public enum StoreEnvironment: String, Sendable, Codable, Hashable {
    case production
    case sandbox
}

/// Everything `decide` needs besides the row and the facts. Values only.
public struct DecisionContext: Sendable, Hashable {
    public var asOf: Date
    public var environment: StoreEnvironment
    public var catalog: ProductCatalog

    public init(asOf: Date, environment: StoreEnvironment = .production, catalog: ProductCatalog) {
        self.asOf = asOf
        self.environment = environment
        self.catalog = catalog
    }
}

/// Judges one purchase at `asOf` (SPEC 5.3, per subscription).
public func judge(_ purchase: PurchaseFact, asOf: Date) -> PurchaseJudgement {
    if let refunded = purchase.refundedAt, refunded <= asOf {
        return PurchaseJudgement(entitled: false, status: .refunded, expiresDate: purchase.expiresDate)
    }
    guard !purchase.isLifetime, let expires = purchase.expiresDate else {
        // A purchase with no expiry (lifetime / non-subscription) entitles for good.
        return PurchaseJudgement(entitled: true, status: .active, expiresDate: nil)
    }
    if expires > asOf {
        let status: SubscriptionStatus
        if let detected = purchase.billingIssueDetectedAt, detected <= asOf {
            status = .billingIssue
        } else if purchase.autoRenew == false {
            status = .canceled
        } else {
            status = .active
        }
        return PurchaseJudgement(entitled: true, status: status, expiresDate: expires)
    }
    if let grace = purchase.gracePeriodExpiresDate, grace > asOf {
        return PurchaseJudgement(entitled: true, status: .billingIssue, expiresDate: expires)
    }
    if purchase.isPaused {
        return PurchaseJudgement(entitled: false, status: .paused, expiresDate: expires)
    }
    return PurchaseJudgement(entitled: false, status: .expired, expiresDate: expires)
}

/// Decides the truth for one user at `context.asOf` and compares it with the row (SPEC 5.3–5.4).
///
/// Pure: no clock, no I/O. The verdict says what to write and what to report; the caller applies it.
public func decide(row: UserRow, facts: SourceFacts, context: DecisionContext) -> Verdict {
    let asOf = context.asOf

    // Safety: any error for the user leaves the row untouched.
    if !facts.errors.isEmpty {
        var drift: [Drift] = []
        if facts.errors.contains(where: { $0.kind == .fetch }) { drift.append(.fetchError) }
        if facts.errors.contains(where: { $0.kind == .verification }) { drift.append(.verificationFailed) }
        let message = facts.errors.map { "\($0.origin.rawValue): \($0.message)" }.joined(separator: "; ")
        return Verdict(row: row, truth: nil, action: .skipped, drift: drift, error: message)
    }

    // Apple overrides RevenueCat for the same App Store subscription.
    let (purchases, conflicts) = merge(revenueCat: facts.purchases, apple: facts.apple, asOf: asOf)

    // Safety: absence is not evidence.
    if !facts.subscriberKnown && facts.apple.isEmpty {
        return Verdict(
            row: row, truth: nil, action: .skipped, drift: [.unknownAtSource],
            error: "subscriber unknown to RevenueCat (new or empty); row left as it was")
    }

    var drift = Set<Drift>()
    if !conflicts.isEmpty { drift.insert(.sourceConflict) }

    // Sandbox purchases never entitle in a production run.
    var considered: [(purchase: PurchaseFact, judgement: PurchaseJudgement)] = []
    for purchase in purchases {
        let judgement = judge(purchase, asOf: asOf)
        if purchase.isSandbox && context.environment == .production {
            if judgement.entitled { drift.insert(.sandboxIgnored) }
            continue
        }
        considered.append((purchase, judgement))
    }

    // Entitled purchases and their tiers; an unknown entitled product stops the decision.
    var granting: (purchase: PurchaseFact, judgement: PurchaseJudgement, tier: Int)?
    var unknownProducts: [String] = []
    for (purchase, judgement) in considered where judgement.entitled {
        guard let tier = context.catalog.tier(for: purchase.productID) else {
            unknownProducts.append(purchase.productID)
            continue
        }
        if let current = granting {
            if tier > current.tier || (tier == current.tier && endKey(purchase) > endKey(current.purchase)) {
                granting = (purchase, judgement, tier)
            }
        } else {
            granting = (purchase, judgement, tier)
        }
    }
    if !unknownProducts.isEmpty {
        drift.insert(.unknownProduct)
        return Verdict(
            row: row, truth: nil, action: .skipped, drift: drift.sorted(), conflicts: conflicts,
            error: "entitled product(s) missing from product_tiers: \(unknownProducts.sorted().joined(separator: ", "))")
    }

    let truth: Entitlement
    let about: PurchaseFact?
    if let granting, granting.tier > 0 {
        let purchase = granting.purchase
        let status = granting.judgement.status
        truth = Entitlement(
            tier: granting.tier, status: status, endDate: purchase.isLifetime ? nil : purchase.expiresDate,
            graceEndsAt: status == .billingIssue ? purchase.gracePeriodExpiresDate.flatMap { $0 > asOf ? $0 : nil } : nil,
            source: purchase.store.subscriptionSource, productID: purchase.productID,
            originalTransactionID: purchase.originalTransactionID ?? row.originalTransactionID,
            autoRenew: purchase.isLifetime ? false : (purchase.autoRenew ?? row.autoRenew))
        about = purchase
    } else if let recent = considered.max(by: { recency($0.purchase) < recency($1.purchase) }) {
        let status: SubscriptionStatus =
            switch recent.judgement.status {
            case .refunded, .paused: recent.judgement.status
            default: .expired
            }
        let purchase = recent.purchase
        truth = Entitlement(
            tier: 0, status: status, endDate: purchase.expiresDate, graceEndsAt: nil,
            source: purchase.store.subscriptionSource, productID: purchase.productID,
            originalTransactionID: purchase.originalTransactionID ?? row.originalTransactionID,
            autoRenew: purchase.autoRenew ?? row.autoRenew)
        about = purchase
    } else {
        // A known subscriber with nothing to go on: not entitled; the rest of the row stays as it was.
        truth = Entitlement(
            tier: 0, status: row.status == SubscriptionStatus.none && row.currentTier == 0 ? .none : .expired,
            endDate: row.endDate, graceEndsAt: nil, source: row.source, productID: row.productID,
            originalTransactionID: row.originalTransactionID, autoRenew: row.autoRenew)
        about = nil
    }

    let before = row.entitlement
    drift.formUnion(driftKinds(before: before, truth: truth))
    let action = action(before: before, truth: truth)
    if action == .none { drift.insert(.inSync) }
    let intents = action == .none ? [] : pushIntents(userID: row.id, before: before, truth: truth)
    return Verdict(
        row: row, truth: truth, action: action, drift: drift.sorted(), intents: intents,
        store: about?.store, price: about?.price, conflicts: conflicts)
}

/// Replaces RevenueCat's view of an App Store subscription with Apple's, recording disagreements.
func merge(
    revenueCat: [PurchaseFact], apple: [AppleSubscriptionFact], asOf: Date
) -> ([PurchaseFact], [SourceConflict]) {
    var purchases = revenueCat
    var conflicts: [SourceConflict] = []
    for fact in apple {
        var applePurchase = fact.purchase
        let ids = Set([fact.lookupTransactionID, applePurchase.originalTransactionID, applePurchase.storeTransactionID].compactMap { $0 })
        let match = purchases.firstIndex { candidate in
            guard candidate.store.isApple, candidate.origin == .revenueCat else { return false }
            if let id = candidate.storeTransactionID, ids.contains(id) { return true }
            if let id = candidate.originalTransactionID, ids.contains(id) { return true }
            return false
        }
        guard let index = match else {
            purchases.append(applePurchase)
            continue
        }
        let rc = purchases[index]
        let rcJudgement = judge(rc, asOf: asOf)
        let appleJudgement = judge(applePurchase, asOf: asOf)
        if rcJudgement.entitled != appleJudgement.entitled || rcJudgement.status != appleJudgement.status {
            conflicts.append(
                SourceConflict(
                    originalTransactionID: applePurchase.originalTransactionID, productID: applePurchase.productID,
                    revenueCat: rcJudgement, appStore: appleJudgement))
        }
        if applePurchase.price == nil { applePurchase.price = rc.price }
        purchases[index] = applePurchase
    }
    return (purchases, conflicts)
}

private func endKey(_ purchase: PurchaseFact) -> Date {
    if purchase.isLifetime || purchase.expiresDate == nil { return .distantFuture }
    return max(purchase.expiresDate!, purchase.gracePeriodExpiresDate ?? .distantPast)
}

private func recency(_ purchase: PurchaseFact) -> (Date, Date) {
    (purchase.purchaseDate ?? purchase.expiresDate ?? .distantPast, purchase.expiresDate ?? .distantFuture)
}

/// Dates are compared to the whole second: RevenueCat v1 reports whole seconds while webhook handlers
/// store milliseconds, and a sub-second difference is no drift.
private func wholeSeconds(_ date: Date) -> Double { date.timeIntervalSince1970.rounded(.down) }

private func sameInstant(_ a: Date?, _ b: Date?) -> Bool {
    switch (a, b) {
    case (nil, nil): true
    case let (a?, b?): wholeSeconds(a) == wholeSeconds(b)
    default: false
    }
}

private func isLater(_ truth: Date?, than db: Date?) -> Bool {
    guard let truth, let db else { return false }
    return wholeSeconds(truth) > wholeSeconds(db)
}

func differs(_ before: Entitlement, _ truth: Entitlement) -> Bool {
    before.tier != truth.tier || before.status != truth.status || !sameInstant(before.endDate, truth.endDate)
        || !sameInstant(before.graceEndsAt, truth.graceEndsAt) || before.source != truth.source
        || before.productID != truth.productID || before.originalTransactionID != truth.originalTransactionID
        || before.autoRenew != truth.autoRenew
}

func action(before: Entitlement, truth: Entitlement) -> Action {
    if truth.tier < before.tier { return .downgrade }
    if truth.tier > before.tier { return before.tier == 0 ? .restore : .upgrade }
    if truth.tier > 0 && isLater(truth.endDate, than: before.endDate) { return .extend }
    return differs(before, truth) ? .statusChange : .none
}

func driftKinds(before: Entitlement, truth: Entitlement) -> Set<Drift> {
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

func pushIntents(userID: String, before: Entitlement, truth: Entitlement) -> [PushIntent] {
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
