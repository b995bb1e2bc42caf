import Foundation
import Logging
import SubreconCore
import SubreconDatabase
import SubreconReports

/// The report phase (SPEC 5.6, 5.7): renders the run's ledger into its report files and counts it into the summary,
/// then writes `summary.json`, the derived reports (`finance.csv`, `summary.md`, `summary.html`, `metrics.prom`)
/// and the `latest` link. Also `subrecon report RUN_ID`'s renderer. History for the chart comes from the
/// `RunHistory` port when there is one; failing to read it only thins the chart.
package struct ReportPhase: Sendable {
    var history: (any RunHistory)?
    var logger: Logger

    package init(history: (any RunHistory)?, logger: Logger) {
        self.history = history
        self.logger = logger
    }

    /// Renders a run's ledger into its report files and counts it into `summary`.
    package static func render(
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
                case .applied:
                    row = ReportRow(runID: runID, verdict: verdict, applied: true, intents: entry.queuedIntents.map(\.kind))
                    for intent in entry.queuedIntents { try intents.append(IntentRow(runID: runID, intent: intent)) }
                    summary.intentsQueued += entry.queuedIntents.count
                    summary.intentsDeduplicated += max(0, verdict.intents.count - entry.queuedIntents.count)
                case .concurrentUpdate:
                    row = ReportRow(
                        runID: runID, verdict: verdict, applied: false, extraDrift: [.concurrentUpdate], intents: [],
                        error: "row changed since it was read (a webhook wrote first); left for the next run")
                case .notFound:
                    row = ReportRow(
                        runID: runID, verdict: verdict, applied: false, extraDrift: [.concurrentUpdate], intents: [],
                        error: "row deleted since it was read")
                case .unchanged, nil:
                    row = ReportRow(runID: runID, verdict: verdict, applied: false)
                }
                try drift.append(row)
                summary.count(row)
                summary.finance.add(row)
            }
        }
        try drift.finish()
        try intents.finish()
    }

    /// Writes `summary.json`, the derived reports and (for a run, not a re-render) the `latest` link.
    package func write(_ summary: RunSummary, folder: RunFolder, shard: ShardSpec, markLatest: Bool = true) async throws {
        try folder.writeJSON(summary, to: "summary.json")
        var stored: [RunHistoryEntry] = []
        if let history {
            do {
                stored = try await history.recentRunSummaries(shard: shard, limit: 31)
            } catch {
                logger.warning("run history unavailable; charting this run only", metadata: ["error": "\(error)"])
            }
        }
        let others = stored.filter { $0.id != summary.runID }
        let points = others.compactMap {
            RunHistoryPoint(runID: $0.id, startedAt: $0.startedAt, status: $0.status.rawValue, summaryJSON: $0.countsJSON)
        }
        try folder.writeDerivedReports(summary, history: points, lastSuccess: Self.lastSuccess(summary, history: others))
        if markLatest { try folder.markLatest() }
    }

    /// This run's finish when it succeeded, else the latest finish of a completed run in `history`.
    static func lastSuccess(_ summary: RunSummary, history: [RunHistoryEntry]) -> Date? {
        if PrometheusExposition.isSuccess(summary), let finished = summary.finishedAt.flatMap(ISO8601.date) { return finished }
        return history.filter { $0.status == .completed }.compactMap(\.finishedAt).max()
    }
}
