import Foundation
import SubreconCore
import SubreconTestKit
import Testing

/// Anything shaped like `Decision.decide(row:facts:context:)`: the real one, or a wrong one a property must catch.
typealias DecideFunction = @Sendable (UserRow, SourceFacts, DecisionContext) -> Verdict

/// The real `decide`.
let realDecide: DecideFunction = { Decision.decide(row: $0, facts: $1, context: $2) }

/// What one generated case says about a property: its premise did not hold (the case proves nothing), or it did
/// and the conclusion held, or it did and the conclusion failed (with what was seen).
enum PropertyOutcome: Sendable, Equatable {
    case premiseFailed
    case held
    case violated(String)
}

/// A property of `decide` over generated cases, as a function of the seed of the case and of the `decide` under test
/// (a property must be one that some plausible wrong `decide` violates; `DecisionMutantTests` shows it).
struct DecisionProperty: Sendable, CustomTestStringConvertible {
    /// A short key, used by the mutant table.
    var key: String
    var name: String
    var check: @Sendable (_ seed: UInt64, _ decide: DecideFunction) -> PropertyOutcome

    var testDescription: String { "\(key): \(name)" }

    /// Runs the property over `seeds`, counting cases, premises held and violations (keeping the first one).
    func run(_ decide: DecideFunction, seeds: [UInt64]) -> PropertyReport {
        var report = PropertyReport(key: key, cases: seeds.count)
        for seed in seeds {
            switch check(seed, decide) {
            case .premiseFailed: break
            case .held: report.premiseHeld += 1
            case .violated(let what):
                report.premiseHeld += 1
                report.violations += 1
                if report.firstCounterexample == nil { report.firstCounterexample = "seed \(seed): \(what)" }
            }
        }
        return report
    }

    /// `count` seeds drawn from `runSeed` (the same run seed gives the same cases).
    static func seeds(count: Int, runSeed: UInt64) -> [UInt64] {
        var g = SeededRandom(seed: runSeed)
        return (0..<count).map { _ in g.next() }
    }
}

/// How a property fared over a run.
struct PropertyReport: Sendable {
    var key: String
    var cases: Int
    var premiseHeld = 0
    var violations = 0
    var firstCounterexample: String?

    /// The share of cases whose premise held.
    var firingRate: Double { cases == 0 ? 0 : Double(premiseHeld) / Double(cases) }
}

/// `.held` when the conclusion holds, else `.violated` with the message.
func conclude(_ holds: Bool, _ message: @autoclosure () -> String) -> PropertyOutcome {
    holds ? .held : .violated(message())
}

extension Input {
    /// The verdict of `decide` on this input.
    func verdict(_ decide: DecideFunction) -> Verdict { decide(row, facts, context) }

    /// The same input with every purchase's environment stated as `sandbox`.
    func withSandbox(_ sandbox: Bool) -> Input {
        var copy = self
        copy.facts.revenueCatPurchases = facts.revenueCatPurchases.map {
            var p = $0
            p.isSandbox = sandbox
            return p
        }
        copy.facts.stores = facts.stores.map {
            var f = $0
            f.purchase.isSandbox = sandbox
            return f
        }
        return copy
    }

    /// The highest mapped tier among the purchases positively entitled at T; nil when none is.
    var highestEntitledTier: Int? {
        effectivePurchases.filter(positivelyEntitled).compactMap { context.catalog.tier(for: $0.productID) }.max()
    }
}
