import Foundation

/// The decision (CONTRACT "Sources and the decision"): pure functions from (row, source facts, instant) to a verdict,
/// no clock and no I/O. Its stages, each in its own file: `judge` one purchase (Decision+Judge), `merge` RevenueCat's
/// view with the stores' (Decision+Merge), resolve one-time purchases and product ids (Decision+OneTime), the truth and
/// what changes (Decision+Truth), whose purchase it is (Decision+Ownership) and the absence rule per line
/// (Decision+Lines); `decide` runs them in order.
public enum Decision {}

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

extension Decision {
    /// Decides the truth for one user at `context.asOf` and compares it with the row (CONTRACT "Sources and the decision", "Applying").
    ///
    /// Pure: no clock, no I/O. The verdict says what to write and what to report; the caller applies it.
    /// Fails closed: an error from any source, an active entitlement no product is named for, or a purchase whose
    /// stated facts cannot decide it (when it could grant more than the truth would leave) leaves the row untouched.
    public static func decide(row: UserRow, facts: SourceFacts, context: DecisionContext) -> Verdict {
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
    static func deciding(row: UserRow, facts: SourceFacts, context: DecisionContext) -> Verdict {
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
    static func addFinance(to verdict: inout Verdict, price about: PurchaseFact?, purchases: [PurchaseFact], context: DecisionContext) {
        let categories = FinanceCategory.of(
            dbTier: verdict.row.currentTier, truthTier: verdict.truth?.tier, truthStatus: verdict.truth?.status.rawValue,
            action: verdict.action.rawValue)
        if let category = categories.first { verdict.financePrice = FinancePrice.of(about, for: category) }
        let refunds = SeenRefund.of(
            purchases.filter { context.environment != .production || $0.isSandbox != true }, asOf: context.asOf)
        if !refunds.isEmpty { verdict.refunds = refunds }
    }

    /// Any error from a source for the user leaves the row untouched: the verdict that says so, or nil.
    static func screen(row: UserRow, facts: SourceFacts) -> Verdict? {
        guard !facts.errors.isEmpty else { return nil }
        var drift: [Drift] = []
        if facts.errors.contains(where: { $0.kind == .fetch }) { drift.append(.fetchError) }
        if facts.errors.contains(where: { $0.kind == .verification }) { drift.append(.verificationFailed) }
        if facts.errors.contains(where: { $0.kind == .conflict }) { drift.append(.sourceConflict) }
        let notes = facts.errors.map { Verdict.Problem.SourceNote(origin: $0.origin, message: $0.message) }
        return Verdict(row: row, truth: nil, action: .skipped, drift: drift.sorted(), error: .sourceErrors(notes))
    }
}
