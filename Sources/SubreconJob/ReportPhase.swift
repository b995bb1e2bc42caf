import Foundation
import Logging
import SubreconCore
import SubreconPorts
import SubreconReports

/// The report phase (CONTRACT "Reports", "Finance figures"): renders the run's ledger into its report files and counts it into the summary,
/// then writes `summary.json`, the derived reports (`finance.csv`, `summary.md`, `summary.html`, `metrics.prom`)
/// and the `latest` link. Also `subrecon report RUN_ID`'s renderer. History for the chart comes from the
/// `RunHistory` port when there is one; failing to read it only thins the chart.
///
/// A run (not a dry run) also keeps what later nights move — `orphans.csv`, `refund_review.csv` and the history
/// its chart and `metrics.prom` showed (`ReportInputs`) — when its history port can keep them (the database), so
/// `report RUN_ID` renders its folder byte for byte (docs/CONTRACT.md, "Reports").
package struct ReportPhase: Sendable {
    var history: (any RunHistory)?
    /// Where a run keeps its report inputs; nil: kept nowhere.
    var reports: (any RunReportRecords)?
    var logger: Logger

    package init(history: (any RunHistory)?, reports: (any RunReportRecords)? = nil, logger: Logger) {
        self.history = history
        self.reports = reports
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
                let row = reportRow(entry, runID: runID)
                if entry.outcome == .applied {
                    for intent in entry.queuedIntents { try intents.append(IntentRow(runID: runID, intent: intent)) }
                    summary.intentsQueued += entry.queuedIntents.count
                    summary.intentsDeduplicated += max(0, entry.verdict.intents.count - entry.queuedIntents.count)
                }
                try drift.append(row)
                summary.count(row)
                summary.finance.add(row)
            }
        }
        try drift.finish()
        try intents.finish()
    }

    /// The report row of one ledger entry: what applying it did (nil: not applied).
    static func reportRow(_ entry: LedgerEntry, runID: String) -> ReportRow {
        let verdict = entry.verdict
        switch entry.outcome {
        case .applied:
            return ReportRow(runID: runID, verdict: verdict, applied: true, intents: entry.queuedIntents.map(\.kind))
        case .concurrentUpdate:
            return ReportRow(
                runID: runID, verdict: verdict, applied: false, extraDrift: [.concurrentUpdate], intents: [],
                error: "row changed since it was read (a webhook wrote first); left for the next run")
        case .notFound:
            return ReportRow(
                runID: runID, verdict: verdict, applied: false, extraDrift: [.concurrentUpdate], intents: [],
                error: "row deleted since it was read")
        case .refusedByPolicy:
            return ReportRow(
                runID: runID, verdict: verdict, applied: false, extraDrift: [.writeRefused], intents: [],
                error: "row-level security let the job's role read this row but its UPDATE changed nothing (no policy "
                    + "lets the role update it); not written: add the policy (README, \"Your database\")")
        case .permissionDenied:
            return ReportRow(
                runID: runID, verdict: verdict, applied: false, extraDrift: [.writeRefused], intents: [],
                error: "the job's role lacks a privilege to write this row (SQLSTATE 42501, named in the log); not written")
        case .unchanged, nil:
            return ReportRow(runID: runID, verdict: verdict, applied: false)
        }
    }

    /// Writes `summary.json`, the derived reports and (for a run, not a re-render) keeps its report inputs and
    /// points the `latest` link at it.
    package func write(_ summary: RunSummary, folder: RunFolder, shard: ShardSpec, markLatest: Bool = true) async throws {
        let inputs = await chartInputs(summary, shard: shard)
        try Self.writeFiles(summary, folder: folder, inputs: inputs)
        if markLatest {
            if !summary.dryRun, let records = reports {
                try await records.recordRunReports(runID: summary.runID, try inputs.kept(folder: folder))
            }
            try folder.markLatest()
        }
    }

    /// `summary.json` and the reports derived from it and `inputs`.
    package static func writeFiles(_ summary: RunSummary, folder: RunFolder, inputs: ReportInputs) throws {
        try folder.writeJSON(summary, to: "summary.json")
        try folder.writeDerivedReports(summary, history: inputs.points, lastSuccess: inputs.lastSuccess)
    }

    /// The history the chart shows and the last success `metrics.prom` states, read now.
    func chartInputs(_ summary: RunSummary, shard: ShardSpec) async -> ReportInputs {
        var stored: [RunHistoryEntry] = []
        if let history {
            do {
                stored = try await history.recentRunSummaries(shard: shard, limit: 31)
            } catch {
                logger.warning("run history unavailable; charting this run only", metadata: ["error": "\(error)"])
            }
        }
        return ReportInputs(summary, history: stored)
    }

    /// This run's finish when it succeeded, else the latest finish of a completed run in `history`.
    static func lastSuccess(_ summary: RunSummary, history: [RunHistoryEntry]) -> Date? {
        if PrometheusExposition.isSuccess(summary), let finished = summary.finishedAt.flatMap(ISO8601.date) { return finished }
        return history.filter { $0.status == .completed }.compactMap(\.finishedAt).max()
    }
}

/// What a run's derived reports are rendered from besides its summary: the other runs its chart shows and the last
/// success `metrics.prom` states. Kept with the run as `history.json` (exact: instants as seconds, amounts as text).
package struct ReportInputs: Sendable, Equatable {
    package var points: [RunHistoryPoint]
    package var lastSuccess: Date?

    package init(points: [RunHistoryPoint], lastSuccess: Date?) {
        self.points = points
        self.lastSuccess = lastSuccess
    }

    /// The inputs of `summary`'s run given its shard's stored runs (`history`; the run itself is left out).
    package init(_ summary: RunSummary, history stored: [RunHistoryEntry]) {
        let others = stored.filter { $0.id != summary.runID }
        points = others.compactMap {
            RunHistoryPoint(runID: $0.id, startedAt: $0.startedAt, status: $0.status, summaryJSON: $0.countsJSON)
        }
        lastSuccess = ReportPhase.lastSuccess(summary, history: others)
    }

    /// The name the history is kept under, beside `orphans.csv` and `refund_review.csv`.
    package static let historyName = "history.json"
    /// The report files kept as written.
    package static let keptFiles = ["orphans.csv", "refund_review.csv"]

    /// What a run keeps: the files later nights move, as written in `folder`, and the history as JSON.
    func kept(folder: RunFolder) throws -> [String: String] {
        var files: [String: String] = [:]
        for name in Self.keptFiles {
            if let data = FileManager.default.contents(atPath: folder.url.appendingPathComponent(name).path) {
                files[name] = String(decoding: data, as: UTF8.self)
            }
        }
        files[Self.historyName] = try json()
        return files
    }

    struct Stored: Codable {
        struct Point: Codable {
            var runID: String
            var startedAt: Double
            var status: RunStatus
            var atRisk: [String: String]
            var users: Int
        }
        var points: [Point]
        var lastSuccess: Double?
    }

    func json() throws -> String {
        let stored = Stored(
            points: points.map {
                Stored.Point(
                    runID: $0.runID, startedAt: $0.startedAt.timeIntervalSinceReferenceDate, status: $0.status,
                    atRisk: $0.atRisk.mapValues(FinanceCSV.decimalString), users: $0.atRiskUsers)
            }, lastSuccess: lastSuccess?.timeIntervalSinceReferenceDate)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return String(decoding: try encoder.encode(stored), as: UTF8.self)
    }

    /// The inputs kept as `json()` wrote them; nil when `text` is not that.
    package init?(json text: String) {
        guard let stored = try? JSONDecoder().decode(Stored.self, from: Data(text.utf8)) else { return nil }
        var points: [RunHistoryPoint] = []
        for point in stored.points {
            var atRisk: [String: Decimal] = [:]
            for (currency, value) in point.atRisk {
                guard let amount = Decimal(string: value, locale: Locale(identifier: "en_US_POSIX")) else { return nil }
                atRisk[currency] = amount
            }
            points.append(
                RunHistoryPoint(
                    runID: point.runID, startedAt: Date(timeIntervalSinceReferenceDate: point.startedAt), status: point.status,
                    atRisk: atRisk, atRiskUsers: point.users))
        }
        self.init(points: points, lastSuccess: stored.lastSuccess.map(Date.init(timeIntervalSinceReferenceDate:)))
    }
}
