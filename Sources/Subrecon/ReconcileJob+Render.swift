import Foundation
import SubreconCore
import SubreconReports
import SubreconStore

extension ReconcileJob {
    /// Renders a run's ledger into its report files and counts it into `summary`.
    static func render(
        ledger: any VerdictLedger, runID: String, folder: RunFolder, into summary: inout RunSummary, batch: Int
    ) async throws {
        let drift = try folder.driftWriter()
        let intents = try folder.intentWriter()
        var after: Int64 = -1
        while true {
            let page = try await ledger.page(after: after, limit: max(batch, 100))
            guard let last = page.last else { break }
            after = last.seq
            for entry in page {
                let verdict = entry.verdict
                let row: ReportRow
                switch entry.outcome {
                case "applied":
                    row = ReportRow(runID: runID, verdict: verdict, applied: true, intents: entry.queuedIntents.map(\.kind))
                    for intent in entry.queuedIntents { try intents.append(IntentRow(runID: runID, intent: intent)) }
                    summary.intentsQueued += entry.queuedIntents.count
                    summary.intentsDeduplicated += max(0, verdict.intents.count - entry.queuedIntents.count)
                case "concurrent_update":
                    row = ReportRow(
                        runID: runID, verdict: verdict, applied: false, extraDrift: [.concurrentUpdate], intents: [],
                        error: "row changed since it was read (a webhook wrote first); left for the next run")
                case "not_found":
                    row = ReportRow(
                        runID: runID, verdict: verdict, applied: false, extraDrift: [.concurrentUpdate], intents: [],
                        error: "row deleted since it was read")
                default:
                    row = ReportRow(runID: runID, verdict: verdict, applied: false)
                }
                try drift.append(row)
                summary.count(row)
                summary.finance.add(verdict)
            }
        }
        try drift.finish()
        try intents.finish()
    }
}
