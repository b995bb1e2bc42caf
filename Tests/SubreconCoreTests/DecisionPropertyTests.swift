import Foundation
import PropertyBased
import SubreconCore
import Testing

/// Properties of `decide` over generated rows and evidence (issue: fail closed). Each input is built from one
/// generated 64-bit seed, so a failure names the seed that replays it (`.fixedSeed` replays the whole run).
///
/// The properties (`DecisionProperty.all`) are written from the rules of CONTRACT "Sources and the decision" on the *stated* facts,
/// independently of `judge`; `DecisionMutantTests` shows that each is one some plausible wrong `decide` violates.
@Suite("decide: properties over generated evidence")
struct DecisionPropertyTests {
    static let products = ["premium_monthly", "pro_monthly", "pro_annual", "lifetime", "mystery", "coins"]
    static let checks = 1_500
    /// A premise that holds in fewer of the generated cases than this proves too little: the generator must change.
    static let minimumFiringRate = 0.10

    @Test("holds for the real decide over random seeds", arguments: DecisionProperty.all)
    func holdsOverRandomSeeds(property: DecisionProperty) async {
        var held = 0
        await propertyCheck(count: Self.checks, input: Gen.uint64()) { seed in
            switch property.check(seed, realDecide) {
            case .premiseFailed: break
            case .held: held += 1
            case .violated(let what): Issue.record("\(property.key): seed \(seed): \(what)")
            }
        }
        let rate = Double(held) / Double(Self.checks)
        #expect(rate >= Self.minimumFiringRate, "\(property.key): premise held in \(held) of \(Self.checks) random cases")
    }

    @Test("holds for the real decide over fixed seeds, its premise holding in at least 10% of the cases", arguments: DecisionProperty.all)
    func firesOverFixedSeeds(property: DecisionProperty) {
        let report = property.run(realDecide, seeds: DecisionProperty.seeds(count: 1_000, runSeed: 22))
        #expect(report.violations == 0, "\(report.key): \(report.violations) violations, first \(report.firstCounterexample ?? "")")
        #expect(
            report.firingRate >= Self.minimumFiringRate,
            "\(report.key): premise held in \(report.premiseHeld) of \(report.cases) cases; tune its generator")
    }

    @Test("each scenario generator is decidable: the real decide never skips it")
    func decidableIsDecided() {
        for seed in DecisionProperty.seeds(count: 500, runSeed: 7) {
            let input = Input.decidable(seed: seed)
            let verdict = input.verdict(realDecide)
            #expect(verdict.action != .skipped, "seed \(seed): \(verdict.drift) \(verdict.error?.description ?? "")")
        }
    }
}
