import Foundation
import SubreconCore
import SubreconPorts
import SubreconReports

/// `subrecon finance` (docs/CONTRACT.md, "subrecon finance"): the finance figures of a period across every night and
/// shard, read from the database's runs, ledgers and `refunds_seen` through `FinancePeriodSource`, written as
/// `FROM-TO` files into a folder of their own. Read only: writes nothing to the database, never a run folder or `latest`.
public enum FinanceClose {
    public struct Result: Sendable {
        public var report: FinancePeriodReport
        public var folder: URL
        /// The files written, by name.
        public var files: [String]
        /// 0 when every night of every shard completed, else `periodGaps`.
        public var exitStatus: ExitStatus
    }

    /// Reads the period, counts it, writes its files into `directory` (created when missing) and returns the report.
    /// With `details`, the details file is written too (streamed). `now` decides which nights have not ended yet.
    public static func run(
        source: some FinancePeriodSource, range: FinancePeriodRange, now: Date, directory: URL, details: Bool, batch: Int = 1000
    ) async throws -> Result {
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            throw ReportError("cannot create \(directory.path): \(error.localizedDescription)")
        }
        let runs = try await source.financeRuns(from: range.from, to: range.to)
        let plan = FinanceNightPlan(runs: runs, range: range, now: now)
        let writer = try details ? FinanceDetailsWriter(target: directory.appendingPathComponent("\(range.stem)-details.csv")) : nil
        var tally = FinanceTally()
        do {
            let emit: (FinanceDetail) throws -> Void = { detail in try writer?.append(detail) }
            try await countChanges(plan.counted, source: source, batch: batch, into: &tally, emit: emit)
            try await countRefunds(range, source: source, batch: batch, into: &tally, emit: emit)
            try await countStocks(plan, source: source, batch: batch, into: &tally, emit: emit)
            for gap in plan.gaps { try writer?.append(gap) }
            try writer?.finish()
        } catch {
            writer?.discard()
            throw error
        }
        var report = FinancePeriodReport(from: range.from, to: range.to)
        report.runsCounted = plan.counted.map(\.id)
        report.runsNotCounted = plan.notCounted
        report.gaps = plan.gaps.sorted()
        tally.fill(&report, nights: plan.nights)
        var files = try write(report, stem: range.stem, into: directory)
        if details { files.append("\(range.stem)-details.csv") }
        return Result(report: report, folder: directory, files: files, exitStatus: report.isComplete ? .ok : .periodGaps)
    }

    /// The applied changes of the counted runs, once each (a rerun's or resume's entries are other users' or none).
    static func countChanges(
        _ runs: [FinanceRun], source: some FinancePeriodSource, batch: Int, into tally: inout FinanceTally,
        emit: (FinanceDetail) throws -> Void
    ) async throws {
        for run in runs {
            var after: Int64 = -1
            while true {
                let page = try await source.financeChanges(runID: run.id, afterSeq: after, limit: batch)
                for entry in page {
                    tally.addDrift(entry.verdict.drift.map(\.rawValue), night: FinanceTally.night(of: run.asOf))
                    guard let detail = FinanceDetail.change(entry.verdict, runID: run.id, asOf: run.asOf) else { continue }
                    tally.add(detail)
                    try emit(detail)
                }
                guard let last = page.last, page.count >= batch else { break }
                after = last.seq
            }
        }
    }

    /// The refunds `refunds_seen` keeps dated in the period, once per store transaction.
    static func countRefunds(
        _ range: FinancePeriodRange, source: some FinancePeriodSource, batch: Int, into tally: inout FinanceTally,
        emit: (FinanceDetail) throws -> Void
    ) async throws {
        var after: (store: String, transactionID: String)?
        while true {
            let page = try await source.financeRefunds(from: range.from, to: range.to, after: after, limit: batch)
            for row in page {
                let detail = FinanceDetail.refund(row.refund, userID: row.userID, runID: row.runID)
                tally.add(detail)
                try emit(detail)
            }
            guard let last = page.last, page.count >= batch else { break }
            after = (last.refund.store, last.refund.transactionID)
        }
    }

    /// Each night's revenue at risk for the series, and the stocks of each shard's last night, counted once.
    static func countStocks(
        _ plan: FinanceNightPlan, source: some FinancePeriodSource, batch: Int, into tally: inout FinanceTally,
        emit: (FinanceDetail) throws -> Void
    ) async throws {
        let stockRunIDs = Set(plan.stockRuns.map(\.run.id))
        var read = Set<String>()
        for nightRun in plan.nightRuns where read.insert(nightRun.run.id).inserted {
            var after: Int64 = -1
            while true {
                let page = try await source.financeStocks(runID: nightRun.run.id, afterSeq: after, limit: batch)
                for entry in page {
                    let details = FinanceDetail.stocks(
                        entry.verdict, runID: nightRun.run.id, asOf: nightRun.run.asOf, shard: nightRun.shard, night: nightRun.night)
                    for detail in details {
                        tally.addAtRisk(detail, night: nightRun.night)
                        guard stockRunIDs.contains(nightRun.run.id) else { continue }
                        tally.add(detail)
                        try emit(detail)
                    }
                }
                guard let last = page.last, page.count >= batch else { break }
                after = last.seq
            }
        }
    }

    /// Writes the CSV, JSON, Markdown and HTML files, each atomically; returns their names.
    static func write(_ report: FinancePeriodReport, stem: String, into directory: URL) throws -> [String] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        var json = try encoder.encode(report)
        json.append(0x0A)
        let files: [(String, Data)] = [
            ("\(stem).csv", Data(FinancePeriodCSV.text(report).utf8)),
            ("\(stem).json", json),
            ("\(stem).md", Data(FinancePeriodText.markdown(report).utf8)),
            ("\(stem).html", Data(FinancePeriodHTML.render(report).utf8)),
        ]
        for (name, data) in files { try RunFolder.writeAtomically(data, to: directory.appendingPathComponent(name)) }
        return files.map(\.0)
    }
}
