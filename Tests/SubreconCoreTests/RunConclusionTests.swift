import SubreconCore
import Testing

@Suite("The safety valve and how a run ends (CONTRACT 'Applying', 'Exit codes')")
struct RunConclusionTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var held: Int
        var losing: Int
        var threshold: Double
        var accepting: Bool
        var userErrors: Int
        var tripped: Bool
        var applies: Bool
        var end: RunStatus
        var exit: SubreconCore.ExitStatus
        var testDescription: String { "\(losing)/\(held) > \(threshold)? accept=\(accepting) errors=\(userErrors) → \(end.rawValue)" }
    }

    static let cases: [Case] = [
        Case(
            held: 0, losing: 0, threshold: 0.5, accepting: false, userErrors: 0, tripped: false, applies: true, end: .completed, exit: .ok),
        Case(
            held: 10, losing: 5, threshold: 0.5, accepting: false, userErrors: 0, tripped: false, applies: true, end: .completed, exit: .ok),
        Case(
            held: 10, losing: 6, threshold: 0.5, accepting: false, userErrors: 0, tripped: true, applies: false, end: .valveTripped,
            exit: .valveTripped),
        Case(
            held: 10, losing: 6, threshold: 0.5, accepting: false, userErrors: 3, tripped: true, applies: false, end: .valveTripped,
            exit: .valveTripped),
        Case(held: 10, losing: 6, threshold: 0.5, accepting: true, userErrors: 0, tripped: true, applies: true, end: .completed, exit: .ok),
        Case(
            held: 10, losing: 6, threshold: 0.5, accepting: true, userErrors: 2, tripped: true, applies: true, end: .completedWithErrors,
            exit: .userErrors),
        Case(
            held: 10, losing: 1, threshold: 0.5, accepting: false, userErrors: 1, tripped: false, applies: true, end: .completedWithErrors,
            exit: .userErrors),
        Case(held: 4, losing: 4, threshold: 1, accepting: false, userErrors: 0, tripped: false, applies: true, end: .completed, exit: .ok),
        Case(
            held: 4, losing: 1, threshold: 0, accepting: false, userErrors: 0, tripped: true, applies: false, end: .valveTripped,
            exit: .valveTripped),
    ]

    @Test("valve, apply permission, end and exit code", arguments: cases)
    func conclusion(_ c: Case) {
        let valve = SafetyValve(threshold: c.threshold, heldTier: c.held, wouldLoseTier: c.losing)
        #expect(valve.tripped == c.tripped)
        #expect(valve.allowsApply(acceptingDowngrades: c.accepting) == c.applies)
        let end = RunStatus.concluding(valve: valve, acceptingDowngrades: c.accepting, userErrors: c.userErrors)
        #expect(end == c.end)
        #expect(end.exitStatus == c.exit)
    }

    @Test("every ledger outcome has a stable name")
    func outcomes() {
        #expect(
            LedgerOutcome.allCases.map(\.rawValue) == [
                "applied", "concurrent_update", "not_found", "refused_by_policy", "permission_denied", "unchanged",
            ])
        #expect(RunStatus.ends.map(\.rawValue) == ["completed", "completed_with_errors", "valve_tripped"])
        #expect(RunStatus.ends.map(\.recorded) == [.completed, .completed, .valveTripped], "reconcile_runs keeps the lifecycle")
    }
}
