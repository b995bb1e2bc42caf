import Foundation
import Logging
import SubreconCore
import SubreconDatabase
import SubreconJob
import SubreconPorts
import SubreconReports

extension Commands {
    /// `subrecon report RUN_ID` (docs/CONTRACT.md, "Commands", "Reports"): re-renders every report file of a past
    /// run's folder from its ledger (`reconcile_verdicts`), its stored summary and the inputs it kept (the night's
    /// `orphans.csv` and `refund_review.csv`, the history its chart showed), byte for byte as the run wrote them.
    ///
    /// The files go to `REPORT_DIR/RUN_ID` when that folder does not exist, else to a new folder beside it
    /// (`RUN_ID.report-N`) unless `overwrite`; `latest` is never moved. A ledger holding fewer verdicts than the run
    /// recorded is refused (66), nothing written: it would read as a smaller night. A folder that cannot be written
    /// is a configuration problem (78).
    public static func report(
        environment env: ProcessEnvironment, runID: String, reportDirectory: URL, overwrite: Bool = false, logger: Logger
    ) async throws -> RunResult {
        let config = try SubreconConfiguration.load(env, requireSource: false)
        return try await withDatabase(config.database, logger: logger) { database in
            guard let stored = try await database.runs.storedRun(id: runID) else {
                throw CommandFailure(.usage, "no run \(runID) in reconcile_runs")
            }
            let staging = try ReportStaging(root: reportDirectory, runID: runID)
            do {
                let summary = try await rerender(stored, database: database, folder: staging.folder, logger: logger)
                let folder = try staging.place(overwrite: overwrite)
                return RunResult(summary: summary, folder: folder, exitStatus: .ok)
            } catch {
                staging.discard()
                throw error
            }
        }
    }

    /// Renders run `stored` into `folder`: the ledger's files and counts, the files it kept, the derived reports.
    static func rerender(_ stored: StoredRun, database: SubscriptionDatabase, folder: RunFolder, logger: Logger) async throws
        -> RunSummary
    {
        let record = stored.record
        let recorded = stored.summary.flatMap { try? JSONDecoder().decode(RunSummary.self, from: $0) }
        // The stored summary is the one value: its counts are rendered again from the ledger.
        var summary =
            recorded?.withCountsCleared()
            ?? {
                var fresh = RunSummary(
                    runID: record.id, mode: record.mode.rawValue, asOf: record.asOf, shard: record.shard.description,
                    dryRun: false, startedAt: record.startedAt)
                fresh.status = record.status
                return fresh
            }()
        try await ReportPhase.render(
            ledger: DatabaseLedger(database: database.verdicts, runID: record.id), runID: record.id, folder: folder, into: &summary,
            batch: 500)
        let expected = max(Int(stored.progress.validated), recorded?.candidates ?? 0)
        guard summary.candidates >= expected else {
            throw CommandFailure(
                .noInput,
                "run \(record.id): its ledger holds \(summary.candidates) of the \(expected) verdicts the run recorded "
                    + "(rows of reconcile_verdicts are gone); not rendered, it would read as a smaller night")
        }
        let kept = try await database.reports.runReports(runID: record.id)
        try await writeLists(kept, record: record, summary: summary, database: database, folder: folder, logger: logger)
        let inputs = try await historyInputs(kept, record: record, summary: summary, database: database, logger: logger)
        try ReportPhase.writeFiles(summary, folder: folder, inputs: inputs)
        return summary
    }

    /// `orphans.csv` and `refund_review.csv` as the run kept them; for a run that kept none (it predates the record),
    /// rebuilt from today's `reconcile_orphans` and `refunds_seen`, which may have moved since: said in the log.
    static func writeLists(
        _ kept: [String: String], record: RunRecord, summary: RunSummary, database: SubscriptionDatabase, folder: RunFolder,
        logger: Logger
    ) async throws {
        if let orphans = kept["orphans.csv"] {
            try folder.write(Data(orphans.utf8), to: "orphans.csv")
        } else {
            logger.warning("orphans.csv rebuilt from today's reconcile_orphans: the run kept no copy of its list")
            try folder.writeOrphans(try await database.links.orphans(runID: record.id))
        }
        if let review = kept["refund_review.csv"] {
            try folder.write(Data(review.utf8), to: "refund_review.csv")
        } else if let review = summary.refundReview {
            logger.warning("refund_review.csv rebuilt from today's refunds_seen: the run kept no copy of its list")
            let rows = try await database.refunds.refundReview(asOf: record.asOf, days: review.days, minimumRefunds: review.minimumRefunds)
            try folder.write(Data(RefundReviewCSV.text(rows.filter { record.shard.contains($0.userID) }).utf8), to: "refund_review.csv")
        }
    }

    /// The history the run's chart and `metrics.prom` showed; for a run that kept none, the runs of its shard that
    /// started before it, as stored today.
    static func historyInputs(
        _ kept: [String: String], record: RunRecord, summary: RunSummary, database: SubscriptionDatabase, logger: Logger
    ) async throws -> ReportInputs {
        if let text = kept[ReportInputs.historyName], let inputs = ReportInputs(json: text) { return inputs }
        logger.warning("the chart's history rebuilt from the runs stored today: the run kept no copy of it")
        let before = try await database.history.runSummaries(shard: record.shard, startedBefore: record.startedAt, limit: 31)
        return ReportInputs(summary, history: before)
    }
}

/// A hidden folder beside the run folders where `report` renders, so a failure leaves nothing half written and the
/// result is moved into place whole.
struct ReportStaging {
    let root: URL
    let runID: String
    let folder: RunFolder

    /// Creates the report directory (if needed) and the staging folder; either failing is exit 78, naming it.
    init(root: URL, runID: String) throws {
        self.root = root
        self.runID = runID
        folder = RunFolder(root: root, runID: ".\(runID).rendering-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        do {
            try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
            try folder.create()
        } catch {
            throw CommandFailure(.config, "the report folder \(root.path) cannot be written (\(error)); nothing rendered")
        }
    }

    /// Moves the rendered files into place: `REPORT_DIR/RUN_ID` when it does not exist or with `overwrite` (file by
    /// file, each replaced atomically; other files there are left alone), else a new `RUN_ID.report-N`.
    func place(overwrite: Bool) throws -> URL {
        let manager = FileManager.default
        let original = root.appendingPathComponent(runID, isDirectory: true)
        var target = original
        if manager.fileExists(atPath: original.path) {
            if overwrite {
                try moveFiles(into: original)
                discard()
                return original
            }
            var n = 1
            repeat {
                target = root.appendingPathComponent("\(runID).report-\(n)", isDirectory: true)
                n += 1
            } while manager.fileExists(atPath: target.path)
        }
        guard rename(folder.url.path, target.path) == 0 else {
            throw CommandFailure(.config, "cannot move the rendered reports to \(target.path): errno \(errno); nothing rendered")
        }
        return target
    }

    private func moveFiles(into original: URL) throws {
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.url.path)
        for name in names.sorted() {
            let from = folder.url.appendingPathComponent(name)
            let to = original.appendingPathComponent(name)
            guard rename(from.path, to.path) == 0 else {
                throw CommandFailure(.config, "cannot overwrite \(to.path): errno \(errno)")
            }
        }
    }

    /// Removes the staging folder and whatever is left in it.
    func discard() { try? FileManager.default.removeItem(at: folder.url) }
}
