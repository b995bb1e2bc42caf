import Foundation
import Logging
import SubreconCore
import SubreconReports
import SubreconStore

/// A database that can list past runs with their stored summaries (for the HTML chart and the last-success
/// metric). `SubscriptionStore` is one; a database without history simply gets charts of the current run.
public protocol RunHistoryReading: Sendable {
    func recentRunSummaries(shard: ShardSpec?, limit: Int) async throws -> [RunHistoryEntry]
}

extension SubscriptionStore: RunHistoryReading {}

extension ReconcileJob {
    /// Writes `finance.csv`, `summary.md`, `summary.html` and `metrics.prom` next to `summary.json`.
    func writeDerivedReports(_ summary: RunSummary, folder: RunFolder, shard: ShardSpec) async throws {
        try await Self.writeDerivedReports(summary, folder: folder, shard: shard, database: database, logger: logger)
    }

    /// Writes the derived reports of `summary` (also for `subrecon report`). History comes from `reconcile_runs`
    /// when the database can list it; failing to read it only thins the chart.
    static func writeDerivedReports(
        _ summary: RunSummary, folder: RunFolder, shard: ShardSpec, database: (any Sendable)?, logger: Logger
    ) async throws {
        var stored: [RunHistoryEntry] = []
        if let history = database as? any RunHistoryReading {
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
        try folder.writeDerivedReports(summary, history: points, lastSuccess: lastSuccess(summary, history: others))
    }

    /// This run's finish when it succeeded, else the latest finish of a completed run in `history`.
    static func lastSuccess(_ summary: RunSummary, history: [RunHistoryEntry]) -> Date? {
        if PrometheusExposition.isSuccess(summary), let finished = summary.finishedAt.flatMap(ISO8601.date) { return finished }
        return history.filter { $0.status == .completed }.compactMap(\.finishedAt).max()
    }
}
