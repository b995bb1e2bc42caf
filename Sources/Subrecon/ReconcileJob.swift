import Foundation
import Logging
import SubreconCore
import SubreconReports
import SubreconStore

/// Options of one `subrecon run`.
public struct RunOptions: Sendable {
    public var asOf: Date
    public var dryRun = false
    public var mode: CandidateQuery.Mode = .nightly
    public var userIDs: [String]?
    public var endAfter: Date?
    public var endBefore: Date?
    public var concurrency = 16
    public var limit: Int?
    public var shard: ShardSpec = .all
    public var reportDirectory: URL
    public var maxDowngradeRatio = 0.5
    public var lookbackDays = 60
    public var environment: StoreEnvironment = .production
    public var pageSize = 500
    /// RevenueCat requests per second shared by all workers; 0 = unlimited. RevenueCat does not document v1
    /// limits (v2 allows 480/min = 8/s per project); 10/s is a cautious default for one nightly job.
    public var revenueCatRequestsPerSecond = RunOptions.defaultRevenueCatRequestsPerSecond
    /// App Store Server API requests per second; nil = Apple's published budget for the environment
    /// (50/s production, 5/s sandbox); 0 = unlimited.
    public var appStoreRequestsPerSecond: Double?
    public static let defaultRevenueCatRequestsPerSecond = 10.0

    /// Apple's per-app budget: 50 requests/s in production, a tenth of it in sandbox.
    public static func defaultAppStoreRequestsPerSecond(_ environment: StoreEnvironment) -> Double {
        environment == .sandbox ? 5 : 50
    }
    public var applyBatchSize = 50

    public init(asOf: Date, reportDirectory: URL) {
        self.asOf = asOf
        self.reportDirectory = reportDirectory
    }

    var selection: CandidateQuery {
        CandidateQuery(
            mode: mode, asOf: asOf, lookbackDays: lookbackDays, userIDs: userIDs, endAfter: endAfter,
            endBefore: endBefore, shard: shard)
    }
}

/// Progress of a run, for a terminal line or a log line.
public struct ProgressSnapshot: Sendable {
    public var phase: String
    public var done: Int
    public var total: Int?
    public var errors: Int
    public var elapsed: Double
    public var rate: Double { elapsed > 0 ? Double(done) / elapsed : 0 }
    public var eta: Double? {
        guard let total, rate > 0, total >= done else { return nil }
        return Double(total - done) / rate
    }
}

/// What a run produced.
public struct RunResult: Sendable {
    public var summary: RunSummary
    public var folder: URL
    public var exitStatus: ExitStatus
}

/// The job of SPEC 5: scan candidates, re-validate, decide, apply, report.
///
/// Two phases: validate (stream candidates, ask the sources with bounded concurrency, decide, spill verdicts in
/// scan order) and apply (unless dry run or the safety valve tripped: write each change with compare-and-set,
/// then the reports). Memory is bounded by the concurrency, not the number of candidates.
public struct ReconcileJob: Sendable {
    public var database: any ReconcileDatabase
    public var source: any FactSource
    public var stats: RequestStats
    public var sourcesNote: [String: String]
    public var logger: Logger
    public var progress: (@Sendable (ProgressSnapshot) -> Void)?

    public init(
        database: any ReconcileDatabase, source: any FactSource, stats: RequestStats, sourcesNote: [String: String],
        logger: Logger, progress: (@Sendable (ProgressSnapshot) -> Void)? = nil
    ) {
        self.database = database
        self.source = source
        self.stats = stats
        self.sourcesNote = sourcesNote
        self.logger = logger
        self.progress = progress
    }

    public static func makeRunID(startedAt: Date, shard: ShardSpec) -> String {
        var style = Date.ISO8601FormatStyle(timeZone: TimeZone(identifier: "UTC")!)
        style = style.dateTimeSeparator(.standard)
        let stamp = startedAt.formatted(style).replacingOccurrences(of: "-", with: "").replacingOccurrences(of: ":", with: "")
        let random = String(UInt32.random(in: 0...UInt32.max), radix: 16)
        let shardPart = shard.count > 1 ? "-s\(shard.index)of\(shard.count)" : ""
        return "\(stamp)\(shardPart)-\(random)"
    }

    public func run(_ options: RunOptions, runID: String, startedAt: Date = Date()) async throws -> RunResult {
        var logger = logger
        logger[metadataKey: "run.id"] = "\(runID)"
        let clock = ContinuousClock()
        let start = clock.now
        let folder = RunFolder(root: options.reportDirectory, runID: runID)
        try folder.create()
        var summary = RunSummary(
            runID: runID, mode: options.mode.rawValue, asOf: options.asOf, shard: options.shard.description,
            dryRun: options.dryRun, startedAt: startedAt)
        summary.sources = sourcesNote

        let catalog = try await database.loadCatalog()
        let context = DecisionContext(asOf: options.asOf, environment: options.environment, catalog: catalog)
        if !options.dryRun {
            try await database.startRun(
                RunRecord(
                    id: runID, mode: options.mode, asOf: options.asOf, shard: options.shard, dryRun: options.dryRun,
                    status: .running, startedAt: startedAt,
                    options: [
                        "concurrency": String(options.concurrency), "lookback_days": String(options.lookbackDays),
                        "max_downgrade_ratio": String(options.maxDowngradeRatio), "limit": options.limit.map(String.init) ?? "",
                    ]))
        }
        logger.info(
            "run started",
            metadata: [
                "run.mode": "\(options.mode.rawValue)", "run.as_of": "\(ISO8601.string(options.asOf))",
                "run.shard": "\(options.shard)", "run.dry_run": "\(options.dryRun)",
                "run.concurrency": "\(options.concurrency)",
            ])

        // Phase 1: validate.
        let spillURL = folder.url.appendingPathComponent(".verdicts.jsonl")
        let spill = try VerdictSpill(url: spillURL)
        defer { try? FileManager.default.removeItem(at: spillURL) }
        var total = try await database.countCandidates(options.selection)
        if let limit = options.limit { total = min(total, limit) }
        let tally = try await validate(options, context: context, spill: spill, total: total, start: start)
        try spill.close()
        summary.timings.validateSeconds = seconds(clock.now - start)

        let valve = RunSummary.Valve(
            threshold: options.maxDowngradeRatio, heldTier: tally.heldTier, wouldLoseTier: tally.wouldLoseTier)
        summary.valve = valve
        let applying = !options.dryRun && !valve.tripped
        if valve.tripped {
            logger.error(
                "safety valve tripped: nothing applied",
                metadata: [
                    "valve.ratio": "\(valve.ratio)", "valve.threshold": "\(valve.threshold)",
                    "valve.held_tier": "\(valve.heldTier)", "valve.would_lose_tier": "\(valve.wouldLoseTier)",
                ])
        }

        // Phase 2: apply (or not) and report, in scan order.
        let applyStart = clock.now
        let drift = try folder.driftWriter()
        let intents = try folder.intentWriter()
        var done = 0
        try await VerdictSpill.read(spillURL, chunk: options.applyBatchSize) { chunk in
            let changing = applying ? chunk.filter(\.changesRow) : []
            let results = changing.isEmpty ? [] : try await database.applyDetailed(changing, runID: runID)
            var resultByUser: [String: AppliedVerdict] = [:]
            for (verdict, result) in zip(changing, results) { resultByUser[verdict.row.id] = result }
            for verdict in chunk {
                let row: ReportRow
                let result = resultByUser[verdict.row.id]
                switch result?.outcome {
                case .applied?:
                    let queued = result?.queuedIntents ?? []
                    row = ReportRow(runID: runID, verdict: verdict, applied: true, intents: queued.map(\.kind))
                    for intent in queued { try intents.append(IntentRow(runID: runID, intent: intent)) }
                    summary.intentsQueued += queued.count
                    summary.intentsDeduplicated += result?.deduplicatedIntents.count ?? 0
                case .concurrentUpdate?:
                    row = ReportRow(
                        runID: runID, verdict: verdict, applied: false, extraDrift: [.concurrentUpdate], intents: [],
                        error: "row changed since it was read (a webhook wrote first); left for the next run")
                case .notFound?:
                    row = ReportRow(
                        runID: runID, verdict: verdict, applied: false, extraDrift: [.concurrentUpdate], intents: [],
                        error: "row deleted since it was read")
                case .unchanged?, nil:
                    row = ReportRow(runID: runID, verdict: verdict, applied: false)
                }
                try drift.append(row)
                summary.count(row)
                summary.finance.add(verdict)
                logger.debug(
                    "user reconciled",
                    metadata: [
                        "user.id": "\(verdict.row.id)", "user.action": "\(row.action)",
                        "user.drift": "\(row.drift.joined(separator: ";"))", "user.applied": "\(row.applied)",
                    ])
            }
            done += chunk.count
            progress?(ProgressSnapshot(phase: applying ? "apply" : "report", done: done, total: spill.count, errors: summary.errors, elapsed: seconds(clock.now - applyStart)))
        }
        try drift.finish()
        try intents.finish()
        summary.timings.applySeconds = seconds(clock.now - applyStart)

        let exit: ExitStatus = valve.tripped ? .valveTripped : (summary.errors > 0 ? .userErrors : .ok)
        summary.exitCode = Int(exit.rawValue)
        summary.status =
            switch exit {
            case .valveTripped: "valve_tripped"
            case .userErrors: "completed_with_errors"
            default: "completed"
            }
        for (name, counts) in stats.snapshot {
            var r = RunSummary.SourceRequests()
            r.requests = counts.requests
            r.rateLimited = counts.rateLimited
            r.failures = counts.failures
            summary.requests[name] = r
        }
        summary.timings.totalSeconds = seconds(clock.now - start)
        summary.finishedAt = ISO8601.string(startedAt.addingTimeInterval(summary.timings.totalSeconds))
        try folder.writeJSON(summary, to: "summary.json")
        try folder.markLatest()
        if !options.dryRun {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            try await database.finishRun(
                id: runID, status: exit == .valveTripped ? .valveTripped : .completed, summary: try encoder.encode(summary),
                finishedAt: startedAt.addingTimeInterval(summary.timings.totalSeconds))
        }
        logger.info(
            "run finished",
            metadata: [
                "run.status": "\(summary.status)", "run.candidates": "\(summary.candidates)",
                "run.applied": "\(summary.applied)", "run.errors": "\(summary.errors)",
                "run.seconds": "\(summary.timings.totalSeconds)", "run.report": "\(folder.url.path)",
            ])
        return RunResult(summary: summary, folder: folder.url, exitStatus: exit)
    }

    struct Tally {
        var heldTier = 0
        var wouldLoseTier = 0
        var errors = 0
    }

    /// Streams candidates page by page, validates up to `concurrency` users at once, spills verdicts in scan order.
    private func validate(
        _ options: RunOptions, context: DecisionContext, spill: VerdictSpill, total: Int, start: ContinuousClock.Instant
    ) async throws -> Tally {
        let clock = ContinuousClock()
        var tally = Tally()
        var lastReport = clock.now
        let source = self.source
        let concurrency = max(1, options.concurrency)
        try await withThrowingTaskGroup(of: (Int, Verdict).self) { group in
            var submitted = 0
            var inFlight = 0
            var nextToWrite = 0
            var finished: [Int: Verdict] = [:]

            func collect(_ result: (Int, Verdict)) throws {
                inFlight -= 1
                finished[result.0] = result.1
                while let verdict = finished.removeValue(forKey: nextToWrite) {
                    try spill.append(verdict)
                    nextToWrite += 1
                    if verdict.row.currentTier > 0 { tally.heldTier += 1 }
                    if verdict.losesTier { tally.wouldLoseTier += 1 }
                    if verdict.isError { tally.errors += 1 }
                }
                if clock.now - lastReport > .milliseconds(500) {
                    lastReport = clock.now
                    progress?(ProgressSnapshot(phase: "validate", done: nextToWrite, total: total, errors: tally.errors, elapsed: seconds(clock.now - start)))
                }
            }

            var lastID: String?
            var exhausted = false
            var pending: Task<[UserRow], any Error>? = Task { [database, selection = options.selection, pageSize = options.pageSize] in
                try await database.candidatePage(selection, after: nil, limit: pageSize)
            }
            scan: while !exhausted, let fetch = pending {
                let page = try await fetch.value
                pending = nil
                if page.count < options.pageSize {
                    exhausted = true
                } else if let last = page.last?.id {
                    // Prefetch the next page while this one is validated.
                    lastID = last
                    pending = Task { [database, selection = options.selection, pageSize = options.pageSize, lastID] in
                        try await database.candidatePage(selection, after: lastID, limit: pageSize)
                    }
                }
                for row in page {
                    if let limit = options.limit, submitted >= limit {
                        pending?.cancel()
                        break scan
                    }
                    if inFlight >= concurrency, let result = try await group.next() { try collect(result) }
                    let index = submitted
                    submitted += 1
                    inFlight += 1
                    group.addTask {
                        let facts = await source.facts(for: row)
                        return (index, decide(row: row, facts: facts, context: context))
                    }
                }
            }
            while let result = try await group.next() { try collect(result) }
        }
        progress?(ProgressSnapshot(phase: "validate", done: spill.count, total: total, errors: tally.errors, elapsed: seconds(clock.now - start)))
        return tally
    }
}

func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}
