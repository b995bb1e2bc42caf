import Foundation
import SubreconCore
import SubreconTestKit

/// The properties of `decide` (CONTRACT "Sources and the decision", "Applying"), each written from the rules on the *stated* facts, independently of
/// `judge` (the oracles of `Input`).
extension DecisionProperty {
    static let all: [DecisionProperty] = [
        lowersOnlyWhenEnded, raisesOnlyWithEvidence, errorsLeaveTheRow, rerunChangesNothing, sandboxNeverRaises,
        sandboxOnlyHoldsNothing, entitledIsNotSkipped, endedMeansTierZero, graceKeepsTier, storeIsAuthority,
        anotherBuyerNeverEntitles,
    ]

    /// Store facts with generated buyers (CONTRACT "Whose purchase it is"): unstated, the user's id, the row's
    /// `account_token` (an Apple token in another case), or another account. A line whose store names another account
    /// never entitles the user: the row is untouched, `ownership_conflict`, whatever else the facts say.
    static let anotherBuyerNeverEntitles = DecisionProperty(
        key: "buyer", name: "a line whose store names another buyer's account leaves the row untouched (ownership_conflict)"
    ) { seed, decide in
        var input = seed % 2 == 0 ? Input(seed: seed) : Input.decidable(seed: seed)
        var g = SeededRandom(seed: seed ^ 0x5EED_B0B)
        let token = "8f14e45f-ceea-467f-a0a6-1b0a3f2c9d11"
        input.row.accountToken = g.chance(0.5) ? token : nil
        for index in input.facts.stores.indices {
            let store = input.facts.stores[index].purchase.store
            let named: String? = g.pick([nil, input.row.id, token.uppercased(), "someone-else", "U"])
            input.facts.stores[index].purchase.buyer = .stated(named, store: store)
        }
        let foreign = input.facts.stores.filter { fact in
            fact.purchase.buyer.account.map { !Decision.isOwnAccount($0, row: input.row) } ?? false
        }
        guard !foreign.isEmpty else { return .premiseFailed }
        let verdict = input.verdict(decide)
        return conclude(
            !verdict.changesRow && verdict.intents.isEmpty && verdict.truth == nil && verdict.drift.contains(.ownershipConflict),
            "\(verdict.action) \(verdict.drift) with \(foreign.count) purchase(s) of another buyer")
    }

    static let lowersOnlyWhenEnded = DecisionProperty(
        key: "a", name: "a tier is lowered only when every purchase that could grant it is positively ended"
    ) { seed, decide in
        let input = seed % 2 == 0 ? Input(seed: seed) : Input.decidable(seed: seed)
        let verdict = input.verdict(decide)
        guard verdict.changesRow, let truth = verdict.truth, truth.tier < input.row.currentTier else { return .premiseFailed }
        let alive = input.effectivePurchases.filter { input.couldGrant($0, above: truth.tier) && !input.positivelyEnded($0) }
        return conclude(alive.isEmpty, "lowered to \(truth.tier) while \(alive.map(\.productID)) could still grant more")
    }

    static let raisesOnlyWithEvidence = DecisionProperty(
        key: "b", name: "a tier is raised only by a mapped purchase positively entitled at T, with a known end or stated non-expiring"
    ) { seed, decide in
        let input = seed % 2 == 0 ? Input(seed: seed) : Input.decidable(seed: seed)
        let verdict = input.verdict(decide)
        guard verdict.changesRow, let truth = verdict.truth, truth.tier > input.row.currentTier else { return .premiseFailed }
        let grantors = input.effectivePurchases.filter {
            input.context.catalog.tier(for: $0.productID) == truth.tier && input.positivelyEntitled($0)
        }
        if grantors.isEmpty { return .violated("raised to \(truth.tier) without a positively entitled purchase") }
        return conclude(
            truth.endDate != nil || grantors.contains { input.statedNonExpiring($0) }, "no end date without a stated lifetime purchase")
    }

    static let errorsLeaveTheRow = DecisionProperty(
        key: "c", name: "any undecodable or unverifiable part of a user's evidence leaves the row untouched"
    ) { seed, decide in
        var input = Input(seed: seed)
        let kinds: [SourceError.Kind] = [.fetch, .verification, .conflict]
        input.facts.errors.append(SourceError(origin: .appStore, kind: kinds[Int(seed % 3)], message: "generated"))
        let verdict = input.verdict(decide)
        return conclude(
            verdict.action == .skipped && verdict.truth == nil && verdict.intents.isEmpty && !verdict.changesRow && verdict.isError,
            "\(verdict.action) \(verdict.drift) with a source error")
    }

    static let rerunChangesNothing = DecisionProperty(
        key: "rerun", name: "the truth, written to the row, is in sync with the same evidence (a rerun changes nothing)"
    ) { seed, decide in
        let input = seed % 2 == 0 ? Input(seed: seed) : Input.decidable(seed: seed)
        let first = input.verdict(decide)
        guard first.changesRow, let truth = first.truth else { return .premiseFailed }
        var written = input
        written.row.currentTier = truth.tier
        written.row.statusText = truth.status.rawValue
        written.row.endDate = truth.endDate
        written.row.graceEndsAt = truth.graceEndsAt
        written.row.source = truth.source
        written.row.productID = truth.productID
        written.row.originalTransactionID = truth.originalTransactionID
        written.row.autoRenew = truth.autoRenew
        let second = written.verdict(decide)
        // Nothing to write (in sync, or skipped because part of the evidence is still unknown).
        return conclude(!second.changesRow && second.intents.isEmpty, "second verdict \(second.action) \(second.drift)")
    }

    static let sandboxNeverRaises = DecisionProperty(
        key: "sandbox", name: "sandbox purchases never raise a tier in a production run, whatever else is said"
    ) { seed, decide in
        var input = Input(seed: seed)
        input.context.environment = .production
        guard input.withSandbox(false).highestEntitledTier != nil else { return .premiseFailed }
        let verdict = input.withSandbox(true).verdict(decide)
        return conclude(verdict.truth.map { $0.tier > input.row.currentTier } != true, "raised to \(verdict.truth?.tier ?? -1)")
    }

    static let sandboxOnlyHoldsNothing = DecisionProperty(
        key: "sandbox-only", name: "a production run never lets a sandbox-only purchase entitle: the user's tier is 0"
    ) { seed, decide in
        var input = Input.decidable(seed: seed)
        input.context.environment = .production
        guard input.withSandbox(false).highestEntitledTier != nil else { return .premiseFailed }
        let verdict = input.withSandbox(true).verdict(decide)
        return conclude(verdict.action != .skipped && verdict.truth?.tier == 0, "\(verdict.action), tier \(verdict.truth?.tier ?? -1)")
    }
}
