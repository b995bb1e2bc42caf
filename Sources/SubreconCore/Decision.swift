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

/// How one purchase stands at T: judged from what its source stated, or unknown, naming what is missing.
public enum Judged: Sendable, Hashable {
    case known(PurchaseJudgement)
    /// The stated facts do not decide the purchase: it may neither entitle nor end anything.
    case unknown(String)

    public var known: PurchaseJudgement? {
        if case .known(let judgement) = self { return judgement }
        return nil
    }
}

/// Judges one purchase at `asOf` (CONTRACT "Sources and the decision", per subscription) from what its source stated, and nothing else.
///
/// A subscription or non-renewing purchase without a stated end is unknown, never lifetime; only a purchase the
/// source states is non-expiring entitles without an end. A refund counts only for the period it falls in (at or
/// after the period's start). A store's own state (Apple's `status`) is evidence: revoked never entitles, billing
/// grace entitles without renewal info, expired never entitles.
public func judge(_ purchase: PurchaseFact, asOf: Date) -> Judged {
    let expires = purchase.expiresDate
    func known(_ entitled: Bool, _ status: SubscriptionStatus, _ end: Date?) -> Judged {
        .known(PurchaseJudgement(entitled: entitled, status: status, expiresDate: end))
    }
    if purchase.storeState == .revoked { return known(false, .refunded, expires) }
    if let refunded = purchase.refundedAt, refunded <= asOf {
        // A refund dated before this period's start belongs to an earlier period: it does not revoke this one.
        // A lifetime purchase has one period: without a stated start, its refund is its own.
        if let start = purchase.purchaseDate {
            if refunded >= start { return known(false, .refunded, purchase.kind == .nonExpiring ? nil : expires) }
        } else if purchase.kind == .nonExpiring {
            return known(false, .refunded, nil)
        } else {
            return .unknown("a refund is stated without the start of the period it would revoke")
        }
    }
    switch purchase.storeState {
    case .expired?: return known(false, .expired, expires)
    case .pending?: return known(false, .expired, expires)
    case .paused?: return known(false, .paused, expires)
    default: break
    }
    switch purchase.kind {
    case .nonExpiring: return known(true, .active, nil)
    case .unstated: return .unknown("the source did not state whether the purchase expires")
    case .subscription, .nonRenewing: break
    }
    guard let expires else {
        let what = purchase.kind == .subscription ? "a subscription" : "a non-renewing purchase"
        return .unknown("\(what) without a stated expiry date")
    }
    let billingIssueStated =
        purchase.storeState == .billingRetry || purchase.storeState == .gracePeriod
        || purchase.billingIssueDetectedAt.map { $0 <= asOf } == true
    if purchase.storeState == .active && expires <= asOf {
        return .unknown("the store says active, but the stated period ended at \(ISO8601.string(expires))")
    }
    if expires > asOf {
        let status: SubscriptionStatus =
            billingIssueStated ? .billingIssue : (purchase.autoRenew == false ? .canceled : .active)
        return known(true, status, expires)
    }
    if purchase.storeState == .gracePeriod {
        // The store says the user is in billing grace: entitled, with or without a stated grace end.
        if purchase.gracePeriodExpiresDate.map({ $0 > asOf }) ?? true { return known(true, .billingIssue, expires) }
    }
    if let grace = purchase.gracePeriodExpiresDate, grace > asOf { return known(true, .billingIssue, expires) }
    if purchase.isPaused { return known(false, .paused, expires) }
    return known(false, .expired, expires)
}

/// RevenueCat's one-time purchases (`non_subscriptions`) with the kind their entitlements state (CONTRACT "Sources and the decision"): an
/// entitlement naming the product with `expires_date: null` makes it non-expiring; with a date, the latest purchase
/// of the product is a non-renewing pass ending then, and earlier ones ended no later (RevenueCat names the purchase
/// with the furthest-out expiry). A product no entitlement names keeps an unstated kind, unless the entitlement the
/// catalog maps it to has ended by `asOf` (then so has it); an unmapped one nobody names grants nothing (a consumable).
func resolvingOneTimePurchases(
    _ purchases: [PurchaseFact], entitlements: [EntitlementFact], catalog: ProductCatalog, asOf: Date
) -> [PurchaseFact] {
    var latestByProduct: [String: Int] = [:]
    for (index, purchase) in purchases.enumerated() where purchase.origin == .revenueCat && purchase.kind == .unstated {
        if let current = latestByProduct[purchase.productID],
            (purchases[current].purchaseDate ?? .distantPast) >= (purchase.purchaseDate ?? .distantPast)
        {
            continue
        }
        latestByProduct[purchase.productID] = index
    }
    var resolved: [PurchaseFact] = []
    for (index, purchase) in purchases.enumerated() {
        guard purchase.origin == .revenueCat, purchase.kind == .unstated else {
            resolved.append(purchase)
            continue
        }
        var fact = purchase
        fact.gracePeriodExpiresDate = nil  // a one-time purchase has no grace of its own; its entitlement's end bounds it
        let naming = entitlements.filter { $0.productID == purchase.productID }
        if naming.contains(where: { $0.expires == .never }) {
            fact.kind = .nonExpiring
        } else if !naming.isEmpty, !naming.contains(where: { $0.expires == .unstated }) {
            let end = naming.compactMap { entitlement -> Date? in
                if case .at(let date) = entitlement.expires { return date }
                return nil
            }.max()
            fact.kind = .nonRenewing
            let isLatest = latestByProduct[purchase.productID] == index
            fact.expiresDate = isLatest || (end.map { $0 <= asOf } ?? false) ? end : nil
        } else if naming.isEmpty {
            guard let entry = catalog.entry(for: purchase.productID) else { continue }  // grants nothing
            fact.expiresDate = nil
            if let name = entry.entitlement, let mapped = entitlements.first(where: { $0.identifier == name }),
                case .at(let end) = mapped.expires, end <= asOf, mapped.gracePeriodExpiresDate.map({ $0 <= asOf }) ?? true
            {
                fact.kind = .nonRenewing
                fact.expiresDate = end
            }
        }
        resolved.append(fact)
    }
    return resolved
}

/// Decides the truth for one user at `context.asOf` and compares it with the row (CONTRACT "Sources and the decision", "Applying").
///
/// Pure: no clock, no I/O. The verdict says what to write and what to report; the caller applies it.
/// Fails closed: an error from any source, an active entitlement no product is named for, or a purchase whose
/// stated facts cannot decide it (when it could grant more than the truth would leave) leaves the row untouched.
public func decide(row: UserRow, facts: SourceFacts, context: DecisionContext) -> Verdict {
    guard row.rowError == nil else { return .unreadable(row) }
    var verdict: Verdict
    if let skipped = screen(row: row, facts: facts) ?? ownershipConflict(row: row, facts: facts) {
        verdict = skipped
        verdict.sources = facts.asked
    } else {
        verdict = deciding(row: row, facts: facts, context: context)
    }
    if !facts.transfers.isEmpty { verdict.transfers = facts.transfers }
    return verdict
}

/// `decide` for a readable row whose sources raised no error and named no other buyer.
func deciding(row: UserRow, facts: SourceFacts, context: DecisionContext) -> Verdict {
    let asOf = context.asOf

    // Each store overrides RevenueCat for its own purchases.
    let (merged, conflicts) = merge(revenueCat: facts.revenueCatPurchases, stores: facts.stores, asOf: asOf)
    if !facts.revenueCatKnowsSubscriber && facts.stores.isEmpty {
        return Verdict(
            row: row, truth: nil, action: .skipped, sources: facts.asked, drift: [.unknownAtSource],
            error: .unknownAtSource(asked: facts.asked, unknownTo: facts.unknownTo, lineTier: nil))
    }
    // An entitlement that may be active but names no product cannot be attributed to a mapped product.
    if let unnamed = facts.revenueCatEntitlements.first(where: { $0.productID == nil && $0.mayBeActive(at: asOf) }) {
        return Verdict(
            row: row, truth: nil, action: .skipped, sources: facts.asked, drift: [.fetchError], conflicts: conflicts,
            error: .unnamedEntitlement(unnamed.identifier))
    }
    let purchases = applyingLineRefunds(
        resolvingOneTimePurchases(
            resolvingProductIDs(merged, catalog: context.catalog), entitlements: facts.revenueCatEntitlements, catalog: context.catalog,
            asOf: asOf),
        asOf: asOf)
    var evidence = Evidence.judging(purchases, context: context)
    if !conflicts.isEmpty { evidence.drift.insert(.sourceConflict) }

    let granting: Granting?
    switch evidence.granting(catalog: context.catalog) {
    case .failure(let unknownProducts):
        return Verdict(
            row: row, truth: nil, action: .skipped, sources: facts.asked, drift: evidence.drift.union([.unknownProduct]).sorted(),
            conflicts: conflicts, error: .missingProducts(unknownProducts.products))
    case .success(let found): granting = found
    }
    var (truth, about) = truthAndPurchase(row: row, granting: granting, considered: evidence.considered, asOf: asOf)
    if let absent = absence(row: row, truth: truth, facts: facts, evidence: evidence, conflicts: conflicts) { return absent }
    // Evidence the rules cannot read never lowers a tier it might still grant, nor passes for "in sync";
    // only a raise that stated evidence justifies goes ahead beside it.
    if truth.tier <= row.currentTier,
        let blocking = evidence.unknowns.first(where: { (context.catalog.tier(for: $0.purchase.productID) ?? Int.max) > truth.tier })
    {
        return Verdict(
            row: row, truth: nil, action: .skipped, sources: facts.asked, drift: evidence.drift.union([.fetchError]).sorted(),
            conflicts: conflicts,
            error: .undecidable(origin: blocking.purchase.origin, productID: blocking.purchase.productID, reason: blocking.reason))
    }
    let written = writeIdentifiers(into: &truth, row: row, facts: facts, granting: granting?.purchase, environment: context.environment)
    let before = row.entitlement
    var drift = evidence.drift.union(driftKinds(before: before, truth: truth)).union(written)
    let action = action(before: before, truth: truth)
    if action == .none { drift.insert(.inSync) }
    let intents = action == .none ? [] : pushIntents(userID: row.id, before: before, truth: truth)
    var verdict = Verdict(
        row: row, truth: truth, action: action, sources: facts.asked, drift: drift.sorted(), intents: intents,
        store: about?.store, price: about?.price, conflicts: conflicts)
    addFinance(to: &verdict, price: about, purchases: purchases, context: context)
    return verdict
}

/// The verdict's finance price (of its first finance category, from the purchase the truth is about) and the refunds
/// seen among `purchases`; a production run counts no sandbox refund (CONTRACT "Sources and the decision").
func addFinance(to verdict: inout Verdict, price about: PurchaseFact?, purchases: [PurchaseFact], context: DecisionContext) {
    let categories = FinanceCategory.of(
        dbTier: verdict.row.currentTier, truthTier: verdict.truth?.tier, truthStatus: verdict.truth?.status.rawValue,
        action: verdict.action.rawValue)
    if let category = categories.first { verdict.financePrice = FinancePrice.of(about, for: category) }
    let refunds = SeenRefund.of(
        purchases.filter { context.environment != .production || $0.isSandbox != true }, asOf: context.asOf)
    if !refunds.isEmpty { verdict.refunds = refunds }
}

/// A purchase whose product id is not in `product_tiers` but one of its alternate ids is (Stripe: `prod_…`, else
/// `price_…`) is judged under the mapped id.
func resolvingProductIDs(_ purchases: [PurchaseFact], catalog: ProductCatalog) -> [PurchaseFact] {
    purchases.map { purchase in
        guard catalog.entry(for: purchase.productID) == nil,
            let mapped = purchase.alternateProductIDs.first(where: { catalog.entry(for: $0) != nil })
        else { return purchase }
        var resolved = purchase
        resolved.productID = mapped
        return resolved
    }
}

/// Any error from a source for the user leaves the row untouched: the verdict that says so, or nil.
func screen(row: UserRow, facts: SourceFacts) -> Verdict? {
    guard !facts.errors.isEmpty else { return nil }
    var drift: [Drift] = []
    if facts.errors.contains(where: { $0.kind == .fetch }) { drift.append(.fetchError) }
    if facts.errors.contains(where: { $0.kind == .verification }) { drift.append(.verificationFailed) }
    if facts.errors.contains(where: { $0.kind == .conflict }) { drift.append(.sourceConflict) }
    let notes = facts.errors.map { Verdict.Problem.SourceNote(origin: $0.origin, message: $0.message) }
    return Verdict(row: row, truth: nil, action: .skipped, drift: drift.sorted(), error: .sourceErrors(notes))
}

/// The purchase granting the truth's tier, with its judgement.
typealias Granting = (purchase: PurchaseFact, judgement: PurchaseJudgement, tier: Int)

/// Entitled products missing from `product_tiers`.
struct UnknownProducts: Error {
    var products: [String]
}

/// The user's purchases, each judged at T and kept by what its stated facts allow: judged (known), undecidable (unknown), and the
/// drift found on the way (a sandbox purchase that would have entitled).
struct Evidence {
    var considered: [(purchase: PurchaseFact, judgement: PurchaseJudgement)] = []
    var unknowns: [(purchase: PurchaseFact, reason: String)] = []
    var drift = Set<Drift>()

    /// Sandbox purchases never entitle in a production run; neither does one whose environment is unstated.
    static func judging(_ purchases: [PurchaseFact], context: DecisionContext) -> Evidence {
        var evidence = Evidence()
        for purchase in purchases {
            let judged = judge(purchase, asOf: context.asOf)
            if context.environment == .production && purchase.isSandbox != false {
                guard let judgement = judged.known else {
                    if purchase.isSandbox == nil { evidence.unknowns.append((purchase, "environment (is_sandbox) not stated")) }
                    continue
                }
                if judgement.entitled {
                    if purchase.isSandbox == true {
                        evidence.drift.insert(.sandboxIgnored)
                    } else {
                        evidence.unknowns.append((purchase, "entitled, but its environment (is_sandbox) is not stated"))
                    }
                    continue
                }
                if purchase.isSandbox == true { continue }
            }
            switch judged {
            case .known(let judgement): evidence.considered.append((purchase, judgement))
            case .unknown(let reason): evidence.unknowns.append((purchase, reason))
            }
        }
        return evidence
    }

    /// The highest tier among entitled purchases (ties: later end); an entitled product missing from the catalog fails.
    func granting(catalog: ProductCatalog) -> Result<Granting?, UnknownProducts> {
        var granting: Granting?
        var unknownProducts: [String] = []
        for (purchase, judgement) in considered where judgement.entitled {
            guard let tier = catalog.tier(for: purchase.productID) else {
                unknownProducts.append(purchase.productID)
                continue
            }
            if let current = granting, tier < current.tier || (tier == current.tier && endKey(purchase) <= endKey(current.purchase)) {
                continue
            }
            granting = (purchase, judgement, tier)
        }
        return unknownProducts.isEmpty ? .success(granting) : .failure(UnknownProducts(products: unknownProducts.sorted()))
    }
}

/// The truth at T (CONTRACT "Sources and the decision", per user) and the purchase it is about: the granting purchase; with nothing entitled,
/// the most recent purchase (`refunded` or `paused` when it is, else `expired`); with no purchase at all, tier 0.
func truthAndPurchase(
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

/// Replaces RevenueCat's view of a store's purchase with the store's own (CONTRACT "Sources and the decision": each store is the authority for
/// its own purchases), recording disagreements, about the same purchase line only (CONTRACT "Whose purchase it is"): a store's purchase
/// matches a RevenueCat purchase of the same store whose line shares a key (of the same product when several do).
/// A store's answer about another line (an older token, another original transaction) stands beside RevenueCat's
/// entries as evidence about that line alone; a RevenueCat entry naming no line is matched by nothing.
func merge(
    revenueCat: [PurchaseFact], stores: [StoreFact], asOf: Date
) -> ([PurchaseFact], [SourceConflict]) {
    var purchases = revenueCat
    var conflicts: [SourceConflict] = []
    var replaced = Set<Int>()
    for fact in stores {
        var storePurchase = fact.purchase
        storePurchase.line = fact.line
        let sameLine = purchases.indices.filter { index in
            !replaced.contains(index) && purchases[index].origin == .revenueCat && purchases[index].isSameLine(as: storePurchase)
        }
        let sameProduct = sameLine.first { index in
            let productID = purchases[index].productID
            let base = productID.split(separator: ":", maxSplits: 1).first.map(String.init) ?? productID
            return productID == storePurchase.productID || base == storePurchase.productID
        }
        guard let index = sameProduct ?? sameLine.first else {
            purchases.append(storePurchase)
            continue
        }
        replaced.insert(index)
        let rc = purchases[index]
        if let rcJudgement = judge(rc, asOf: asOf).known, let storeJudgement = judge(storePurchase, asOf: asOf).known,
            rcJudgement.entitled != storeJudgement.entitled || rcJudgement.status != storeJudgement.status
        {
            conflicts.append(
                SourceConflict(
                    store: storePurchase.origin, originalTransactionID: storePurchase.originalTransactionID,
                    productID: storePurchase.productID, revenueCat: rcJudgement, storeView: storeJudgement))
        }
        if storePurchase.price == nil { storePurchase.price = rc.price }
        if storePurchase.renewalPrice == nil { storePurchase.renewalPrice = rc.renewalPrice }
        if storePurchase.ownership == nil { storePurchase.ownership = rc.ownership }
        if storePurchase.periodType == nil { storePurchase.periodType = rc.periodType }
        purchases[index] = storePurchase
    }
    return (purchases, conflicts)
}

private func endKey(_ purchase: PurchaseFact) -> Date {
    guard !purchase.isLifetime, let expires = purchase.expiresDate else { return .distantFuture }
    return max(expires, purchase.gracePeriodExpiresDate ?? .distantPast)
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
    case (let a?, let b?): wholeSeconds(a) == wholeSeconds(b)
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
        || before.autoRenew != truth.autoRenew || before.storeIdentifiers != truth.storeIdentifiers
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
