import Foundation
import SubreconCore

/// Properties over decidable inputs: evidence stated well enough that `decide` must conclude, and conclude right.
extension DecisionProperty {
    static let entitledIsNotSkipped = DecisionProperty(
        key: "entitled", name: "with stated evidence of an entitling purchase the verdict is not skipped and grants its tier"
    ) { seed, decide in
        let input = Input.decidable(seed: seed)
        guard let tier = input.highestEntitledTier else { return .premiseFailed }
        let verdict = input.verdict(decide)
        return conclude(
            verdict.action != .skipped && verdict.truth?.tier == tier,
            "\(verdict.action), tier \(verdict.truth?.tier ?? -1) where a purchase positively entitles to \(tier)")
    }

    static let endedMeansTierZero = DecisionProperty(
        key: "ended", name: "with stated purchases of which none entitles, the verdict is not skipped and the tier is 0"
    ) { seed, decide in
        let input = Input.decidable(seed: seed)
        guard !input.effectivePurchases.isEmpty, input.highestEntitledTier == nil else { return .premiseFailed }
        let verdict = input.verdict(decide)
        return conclude(verdict.action != .skipped && verdict.truth?.tier == 0, "\(verdict.action), tier \(verdict.truth?.tier ?? -1)")
    }

    static let graceKeepsTier = DecisionProperty(
        key: "grace", name: "a purchase in billing grace keeps its tier; granting it, the status is billing_issue until the grace end"
    ) { seed, decide in
        let (input, purchase) = Input.inGrace(seed: seed)
        guard input.positivelyEntitled(purchase), let tier = input.context.catalog.tier(for: purchase.productID) else {
            return .premiseFailed
        }
        let verdict = input.verdict(decide)
        guard verdict.action != .skipped, let truth = verdict.truth, truth.tier >= tier else {
            return .violated("\(verdict.action), tier \(verdict.truth?.tier ?? -1) below the tier \(tier) of a purchase in grace")
        }
        let rivals = input.effectivePurchases.filter { other in
            other != purchase && input.positivelyEntitled(other) && (input.context.catalog.tier(for: other.productID) ?? 0) >= tier
        }
        guard rivals.isEmpty else { return .held }
        return conclude(
            truth.status == .billingIssue && truth.graceEndsAt == purchase.gracePeriodExpiresDate,
            "granted by a purchase in grace, but status \(truth.status), grace end \(truth.graceEndsAt.map(ISO8601.string) ?? "none")")
    }

    static let storeIsAuthority = DecisionProperty(
        key: "authority", name: "the store's own view of a purchase decides over RevenueCat's view of the same purchase"
    ) { seed, decide in
        let (input, withoutRevenueCat, storeEntitles) = Input.disputed(seed: seed)
        let verdict = input.verdict(decide)
        let storeOnly = withoutRevenueCat.verdict(decide)
        guard verdict.action != .skipped, let truth = verdict.truth else { return .violated("\(verdict.action) \(verdict.drift)") }
        if storeEntitles && truth.tier != 2 { return .violated("the store says pro until later, yet tier \(truth.tier)") }
        return conclude(
            truth == storeOnly.truth,
            "RevenueCat's view changed the truth: \(truth) against \(storeOnly.truth.map { "\($0)" } ?? "none") from the store alone")
    }
}
