import Foundation
import SubreconCore
import SubreconPorts

/// The apply phase (CONTRACT "Applying"): writes every ledger entry not applied yet, in scan order, `applyBatchSize` rows per
/// transaction; each row compare-and-set and atomic with its audit row, intents and ledger outcome. Stops between
/// batches when asked (the batch in progress commits).
struct ApplyPhase: Sendable {
    var ledger: any VerdictLedger
    var options: RunOptions
    var progress: (@Sendable (ProgressSnapshot) -> Void)?

    /// What this pass wrote (a resumed run counts only its own writes; the report counts the whole ledger).
    struct Tally: Sendable, Hashable {
        var outcomes: [LedgerOutcome: Int] = [:]
    }

    func run(total: Int, start: ContinuousClock.Instant) async throws -> Tally {
        var tally = Tally()
        var after: Int64 = -1
        var done = 0
        while true {
            if let reason = options.stop?.reason { throw RunStopped(reason: reason) }
            let page = try await ledger.page(after: after, limit: options.tuning.applyBatchSize)
            guard let last = page.last else { break }
            after = last.seq
            let open = page.filter { $0.outcome == nil }
            let changing = open.filter(\.verdict.changesRow).map(\.verdict)
            if !changing.isEmpty {
                for applied in try await ledger.apply(changing) { tally.outcomes[applied.outcome.ledgerOutcome, default: 0] += 1 }
            }
            let unchanged = open.filter { !$0.verdict.changesRow }.map(\.seq)
            try await ledger.markUnchanged(unchanged)
            tally.outcomes[.unchanged, default: 0] += unchanged.count
            done += page.count
            progress?(ProgressSnapshot(phase: "apply", done: done, total: total, errors: 0, elapsed: seconds(ContinuousClock.now - start)))
        }
        return tally
    }
}
