import Foundation
import SubreconCore
import Testing

/// A plausible wrong `decide`, written as a wrapper around the real one or a rewrite of its inputs or
/// outputs, and the properties expected to catch it.
struct Mutant: Sendable, CustomTestStringConvertible {
    var name: String
    /// Keys of the properties that must each report a violation for this mutant.
    var caughtBy: [String]
    var decide: DecideFunction

    var testDescription: String { name }

    static let all: [Mutant] = [alwaysSkip, alwaysDowngrade, ignoreSandbox, ignoreGrace, swapAuthority, ignoreBuyer]

    /// The buyer a store names is dropped: every purchase judged as if the store named nobody.
    static let ignoreBuyer = Mutant(name: "ignore the buyer", caughtBy: ["buyer"]) { row, facts, context in
        var anyone = facts
        anyone.stores = facts.stores.map {
            var f = $0
            f.purchase.buyer = .unstated
            return f
        }
        return realDecide(row, anyone, context)
    }

    /// Answers `skipped` (as a fetch error) with no change for everyone: trivially fail-closed, and useless.
    static let alwaysSkip = Mutant(
        name: "always skip", caughtBy: ["sandbox-only", "entitled", "ended", "grace", "authority"]
    ) { row, facts, _ in
        Verdict(row: row, truth: nil, action: .skipped, sources: facts.asked, drift: [.fetchError], error: .earlierText("mutant: skipped"))
    }

    /// Tier 0, `expired`, for everyone.
    static let alwaysDowngrade = Mutant(name: "always downgrade", caughtBy: ["a", "c", "entitled", "grace", "authority"]) {
        row, facts, _ in
        let truth = Entitlement(
            tier: 0, status: .expired, endDate: row.endDate, graceEndsAt: nil, source: row.source, productID: row.productID,
            originalTransactionID: row.originalTransactionID, autoRenew: row.autoRenew)
        let action: Action = row.currentTier > 0 ? .downgrade : (row.entitlement == truth ? .none : .statusChange)
        let intents =
            row.currentTier > 0
            ? [PushIntent(userID: row.id, kind: .expired, periodEnd: row.endDate, productID: row.productID, tier: 0)] : []
        return Verdict(
            row: row, truth: truth, action: action, sources: facts.asked,
            drift: row.currentTier > 0 ? [.missedExpiration] : (action == .none ? [.inSync] : []), intents: intents)
    }

    /// Sandbox purchases treated as production ones: the environment stated by the sources is dropped.
    static let ignoreSandbox = Mutant(name: "ignore sandbox", caughtBy: ["sandbox", "sandbox-only"]) { row, facts, context in
        var production = facts
        production.revenueCatPurchases = facts.revenueCatPurchases.map {
            var p = $0
            p.isSandbox = false
            return p
        }
        production.stores = facts.stores.map {
            var f = $0
            f.purchase.isSandbox = false
            return f
        }
        return realDecide(row, production, context)
    }

    /// Billing grace dropped from the facts: grace end dates and the store's grace state.
    static let ignoreGrace = Mutant(name: "ignore grace", caughtBy: ["grace"]) { row, facts, context in
        func graceless(_ purchase: PurchaseFact) -> PurchaseFact {
            var p = purchase
            p.gracePeriodExpiresDate = nil
            if p.storeState == .gracePeriod { p.storeState = nil }
            return p
        }
        var stripped = facts
        stripped.revenueCatPurchases = facts.revenueCatPurchases.map(graceless)
        stripped.stores = facts.stores.map {
            var f = $0
            f.purchase = graceless(f.purchase)
            return f
        }
        stripped.revenueCatEntitlements = facts.revenueCatEntitlements.map {
            var e = $0
            e.gracePeriodExpiresDate = nil
            return e
        }
        return realDecide(row, stripped, context)
    }

    /// RevenueCat's view wins over the store's own: a store's answer about a purchase RevenueCat also describes
    /// (same store, a shared id) is dropped.
    static let swapAuthority = Mutant(name: "swap authority", caughtBy: ["authority"]) { row, facts, context in
        var revenueCatWins = facts
        revenueCatWins.stores = facts.stores.filter { fact in
            !facts.revenueCatPurchases.contains { rc in
                rc.store.isApple == fact.purchase.store.isApple && (rc.store.isApple || rc.store == fact.purchase.store)
                    && [rc.storeTransactionID, rc.originalTransactionID].contains { $0.map(fact.identifiers.contains) == true }
            }
        }
        return realDecide(row, revenueCatWins, context)
    }
}

@Suite("decide: every listed wrong decide fails at least one property")
struct DecisionMutantTests {
    static let seeds = DecisionProperty.seeds(count: 400, runSeed: 2_022)

    @Test("the mutant is caught by the properties expected to catch it", arguments: Mutant.all)
    func mutantIsCaught(mutant: Mutant) {
        let reports = DecisionProperty.all.map { $0.run(mutant.decide, seeds: Self.seeds) }
        let caught = reports.filter { $0.violations > 0 }
        #expect(!caught.isEmpty, "\(mutant.name) passes every property")
        for key in mutant.caughtBy {
            let report = reports.first { $0.key == key }
            #expect(report != nil, "no property \(key)")
            #expect((report?.violations ?? 0) > 0, "\(mutant.name) is not caught by \(key)")
        }
    }

    @Test("the real decide is caught by no property on the mutants' seeds")
    func realDecideIsNotCaught() {
        for property in DecisionProperty.all {
            let report = property.run(realDecide, seeds: Self.seeds)
            #expect(report.violations == 0, "\(report.key): \(report.firstCounterexample ?? "")")
        }
    }
}
