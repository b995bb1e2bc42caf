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
    /// RevenueCat requests per second for the whole app (every shard together; a `--shard I/N` run takes 1/N), shared
    /// by all workers; 0 = unlimited. RevenueCat does not document v1 limits (v2 allows 480/min = 8/s per project);
    /// 10/s is a cautious default for one nightly job.
    public var revenueCatRequestsPerSecond = RunOptions.defaultRevenueCatRequestsPerSecond
    /// App Store Server API requests per second for the whole app (a `--shard I/N` run takes 1/N); nil = Apple's
    /// published budget for the environment (50/s production, 5/s sandbox); 0 = unlimited.
    public var appStoreRequestsPerSecond: Double?
    public static let defaultRevenueCatRequestsPerSecond = 10.0

    /// Apple's per-app budget: 50 requests/s in production, a tenth of it in sandbox.
    public static func defaultAppStoreRequestsPerSecond(_ environment: StoreEnvironment) -> Double {
        environment == .sandbox ? 5 : 50
    }
    public var applyBatchSize = 50
    /// Verdicts written to the ledger per round trip (and the granularity of resume).
    public var ledgerBatchSize = 200
    /// Apply even if the safety valve trips (`--accept-downgrades RUN_ID`, after an operator reviewed the run).
    public var acceptDowngrades = false
    /// Apply the truth of an `asOf` far from now (`--apply-past`: deliberate replays and tests; SPEC 5.8).
    public var applyPast = false
    /// Time a user gets for all its requests together; past it the user is `fetch_error` tonight.
    public var userDeadline: Duration = RunOptions.defaultUserDeadline
    public static let defaultUserDeadline: Duration = .seconds(120)
    /// How far the scan may run ahead of its oldest user still in flight (bounds what a resume must skip).
    public var reorderWindow = 10_000
    /// Asks the run to stop cleanly (signals, a lost shard lock): validated verdicts are kept, exit 75.
    public var stop: StopSignal?

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
/// Three passes: validate (stream candidates, ask the sources with bounded concurrency, decide, append verdicts in
/// scan order to the run's ledger together with the run's progress), apply (unless dry run or the safety valve
/// tripped: each change with compare-and-set, its outcome recorded in the ledger in the same transaction), and
/// report (render the ledger). A run killed at any point resumes from its ledger (`resume:`) without asking the
/// sources again for users already validated and without writing anyone twice. Memory is bounded by the
/// concurrency and batch sizes, not by the number of candidates.
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
        let style = Date.ISO8601FormatStyle(timeZone: TimeZone(identifier: "UTC")!)
        let stamp = startedAt.formatted(style).replacingOccurrences(of: "-", with: "").replacingOccurrences(of: ":", with: "")
        let random = String(UInt32.random(in: 0...UInt32.max), radix: 16)
        let shardPart = shard.count > 1 ? "-s\(shard.index)of\(shard.count)" : ""
        return "\(stamp)\(shardPart)-\(random)"
    }

    /// Runs (or, with `resume`, continues) run `runID`.
    public func run(_ options: RunOptions, runID: String, startedAt: Date = Date(), resume: RunProgress? = nil) async throws -> RunResult {
        var logger = logger
        logger[metadataKey: "run.id"] = "\(runID)"
        let clock = ContinuousClock()
        let start = clock.now
        let folder = RunFolder(root: options.reportDirectory, runID: runID)
        do {
            try folder.create()
        } catch {
            throw CommandFailure(.config, "the run folder \(folder.url.path) cannot be written (\(error)); nothing done")
        }
        var summary = RunSummary(
            runID: runID, mode: options.mode.rawValue, asOf: options.asOf, shard: options.shard.description,
            dryRun: options.dryRun, startedAt: startedAt)
        summary.sources = sourcesNote

        do {
            let catalog = try await database.loadCatalog()
            let context = DecisionContext(asOf: options.asOf, environment: options.environment, catalog: catalog)
            let ledger: any VerdictLedger
            if options.dryRun {
                ledger = try FileLedger(url: folder.url.appendingPathComponent(".verdicts.jsonl"))
            } else {
                ledger = DatabaseLedger(database: database, runID: runID)
                if resume == nil {
                    try await database.startRun(
                        RunRecord(
                            id: runID, mode: options.mode, asOf: options.asOf, shard: options.shard, dryRun: false,
                            status: .running, startedAt: startedAt,
                            options: [
                                "concurrency": String(options.concurrency), "lookback_days": String(options.lookbackDays),
                                "max_downgrade_ratio": String(options.maxDowngradeRatio),
                                "limit": options.limit.map(String.init) ?? "",
                            ]))
                    try await database.recordSelection(runID: runID, selection: try StoredSelection(options).encoded())
                } else {
                    try await database.setRunStatus(id: runID, .running)
                }
            }
            logger.info(
                resume == nil ? "run started" : "run resumed",
                metadata: [
                    "run.mode": "\(options.mode.rawValue)", "run.as_of": "\(ISO8601.string(options.asOf))",
                    "run.shard": "\(options.shard)", "run.dry_run": "\(options.dryRun)",
                    "run.concurrency": "\(options.concurrency)", "run.validated_before": "\(resume?.validated ?? 0)",
                ])

            var state = resume ?? RunProgress()
            if !state.scanDone {
                state = try await validate(options, context: context, ledger: ledger, from: state, start: start)
            }
            summary.timings.validateSeconds = seconds(clock.now - start)

            let valve = RunSummary.Valve(
                threshold: options.maxDowngradeRatio, heldTier: state.heldTier, wouldLoseTier: state.wouldLoseTier)
            summary.valve = valve
            let overridden = valve.tripped && options.acceptDowngrades
            if valve.tripped {
                logger.log(
                    level: overridden ? .warning : .error,
                    overridden ? "safety valve tripped, overridden by --accept-downgrades" : "safety valve tripped: nothing applied",
                    metadata: [
                        "valve.ratio": "\(valve.ratio)", "valve.threshold": "\(valve.threshold)",
                        "valve.held_tier": "\(valve.heldTier)", "valve.would_lose_tier": "\(valve.wouldLoseTier)",
                    ])
            }
            let applyStart = clock.now
            if !options.dryRun && (!valve.tripped || overridden) {
                try await applyAll(options, ledger: ledger, total: Int(state.validated), start: applyStart)
            }
            summary.timings.applySeconds = seconds(clock.now - applyStart)
            try await Self.render(ledger: ledger, runID: runID, folder: folder, into: &summary, batch: options.applyBatchSize)

            let tripped = valve.tripped && !overridden
            let exit: ExitStatus = tripped ? .valveTripped : (summary.errors > 0 ? .userErrors : .ok)
            summary.exitCode = Int(exit.rawValue)
            summary.status = tripped ? "valve_tripped" : (exit == .userErrors ? "completed_with_errors" : "completed")
            summary.requests = stats.snapshot
            summary.timings.totalSeconds = seconds(clock.now - start)
            let finishedAt = startedAt.addingTimeInterval(summary.timings.totalSeconds)
            summary.finishedAt = ISO8601.string(finishedAt)
            try folder.writeJSON(summary, to: "summary.json")
            try await writeDerivedReports(summary, folder: folder, shard: options.shard)
            try folder.markLatest()
            if !options.dryRun {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.sortedKeys]
                try await database.finishRun(
                    id: runID, status: tripped ? .valveTripped : .completed, summary: try encoder.encode(summary),
                    finishedAt: finishedAt)
            }
            logger.info(
                "run finished",
                metadata: [
                    "run.status": "\(summary.status)", "run.candidates": "\(summary.candidates)",
                    "run.applied": "\(summary.applied)", "run.errors": "\(summary.errors)",
                    "run.seconds": "\(summary.timings.totalSeconds)", "run.report": "\(folder.url.path)",
                ])
            return RunResult(summary: summary, folder: folder.url, exitStatus: exit)
        } catch let failure as CommandFailure {
            throw failure
        } catch {
            if !options.dryRun { try? await database.setRunStatus(id: runID, .failed) }
            let reason = (error as? RunStopped)?.reason ?? ExitStatus.failure(error).line
            logger.error("run stopped", metadata: ["error": "\(reason)"])
            throw CommandFailure(
                .stopped,
                options.dryRun
                    ? "dry run \(runID) stopped (\(reason)); nothing was changed"
                    : "run \(runID) stopped (\(reason)); nothing is lost: resume it with `subrecon run --resume \(runID)`")
        }
    }

    /// Streams candidates after `state.scanCursor`, validates up to `concurrency` users at once, and appends each
    /// verdict to the ledger as soon as it is known (`ledgerBatchSize` at a time, with the progress they make).
    ///
    /// A verdict's `seq` is its position in the scan, so the ledger reads in scan order whatever order answers came
    /// in; no verdict waits in memory for a slower user before it. The stored `scanCursor` is the id just before the
    /// oldest user still in flight: everything up to it is in the ledger, and a resumed run skips the users after
    /// it that are in the ledger already (`ledgerTail`). The scan never runs more than `reorderWindow` users ahead
    /// of its oldest user in flight, which bounds that tail; a user gets `userDeadline` for all its requests.
    private func validate(
        _ options: RunOptions, context: DecisionContext, ledger: any VerdictLedger, from initial: RunProgress,
        start: ContinuousClock.Instant
    ) async throws -> RunProgress {
        let clock = ContinuousClock()
        var state = initial
        var total = try await database.countCandidates(options.selection)
        if let limit = options.limit { total = min(total, limit) }
        var lastReport = clock.now
        let source = self.source
        let concurrency = max(1, options.concurrency)
        let window = max(concurrency, options.reorderWindow)
        let alreadyDone = Int(initial.validated)
        let tail = try await ledger.tail(after: initial.scanCursor)
        let seqBase = tail.nextSeq
        var alreadyInLedger = tail.userIDs
        let stop = options.stop
        let deadline = options.userDeadline

        enum Event: Sendable {
            case verdict(Int, Verdict)
            case stop
        }

        var stoppedBecause: String?
        try await withThrowingTaskGroup(of: Event.self) { group in
            var submitted = 0
            // Users in flight: scan index -> id of the user scanned just before it (the resume point while it is the oldest).
            struct Previous { var id: String? }
            var inFlight: [Int: Previous] = [:]
            var order: [Int] = []  // scan indices in submission order; entries no longer in flight are dropped lazily
            var orderHead = 0
            var lastScannedID = initial.scanCursor
            var batch: [(seq: Int64, verdict: Verdict)] = []

            func oldestInFlight() -> Int? {
                while orderHead < order.count, inFlight[order[orderHead]] == nil { orderHead += 1 }
                if orderHead > 4096 && orderHead * 2 > order.count {
                    order.removeFirst(orderHead)
                    orderHead = 0
                }
                return orderHead < order.count ? order[orderHead] : nil
            }

            /// Everything scanned up to this id has its verdict in the ledger (once the batch is written).
            func watermark() -> String? {
                guard let oldest = oldestInFlight() else { return lastScannedID }
                return inFlight[oldest]?.id
            }

            func flush() async throws {
                state.scanCursor = watermark()
                try await ledger.append(batch.map { ($0.seq, $0.verdict) }, progress: state)
                batch.removeAll(keepingCapacity: true)
            }

            func stopReason() -> String? {
                if let reason = stop?.reason { return reason }
                return Task.isCancelled ? "interrupted" : nil
            }

            /// Takes one event; false when the run was asked to stop.
            func take(_ event: Event) async throws -> Bool {
                guard case .verdict(let index, let verdict) = event, stopReason() == nil else {
                    return false
                }
                inFlight[index] = nil
                batch.append((seqBase + Int64(index), verdict))
                state.validated += 1
                if verdict.row.currentTier > 0 { state.heldTier += 1 }
                if verdict.losesTier { state.wouldLoseTier += 1 }
                if verdict.isError { state.userErrors += 1 }
                if batch.count >= options.ledgerBatchSize { try await flush() }
                if clock.now - lastReport > .milliseconds(500) {
                    lastReport = clock.now
                    progress?(
                        ProgressSnapshot(
                            phase: "validate", done: Int(state.validated), total: total, errors: state.userErrors,
                            elapsed: seconds(clock.now - start)))
                }
                return true
            }

            if let stop { group.addTask { await stop.wait(); return .stop } }

            let remaining = options.limit.map { max(0, $0 - alreadyDone) }
            var exhausted = remaining == 0
            var pending: Task<[UserRow], any Error>? =
                exhausted
                ? nil
                : Task { [database, selection = options.selection, pageSize = options.pageSize, cursor = initial.scanCursor] in
                    try await database.candidatePage(selection, after: cursor, limit: pageSize)
                }
            scan: while !exhausted, let fetch = pending {
                let page = try await withTaskCancellationHandler {
                    try await fetch.value
                } onCancel: {
                    fetch.cancel()
                }
                pending = nil
                if page.count < options.pageSize {
                    exhausted = true
                } else if let last = page.last?.id {
                    // Prefetch the next page while this one is validated.
                    pending = Task { [database, selection = options.selection, pageSize = options.pageSize] in
                        try await database.candidatePage(selection, after: last, limit: pageSize)
                    }
                }
                for row in page {
                    if let reason = stopReason() {
                        stoppedBecause = reason
                        break scan
                    }
                    if let remaining, submitted >= remaining { break scan }
                    if alreadyInLedger.remove(row.id) != nil {
                        // Validated before the run stopped, after its resume point: not asked again.
                        lastScannedID = row.id
                        continue
                    }
                    while inFlight.count >= concurrency || oldestInFlight().map({ submitted - $0 >= window }) == true {
                        guard let event = try await group.next() else { break }
                        if try await !take(event) {
                            stoppedBecause = stopReason() ?? "stopped"
                            break scan
                        }
                    }
                    let index = submitted
                    submitted += 1
                    inFlight[index] = Previous(id: lastScannedID)
                    order.append(index)
                    lastScannedID = row.id
                    group.addTask {
                        let facts = await Self.facts(for: row, from: source, deadline: deadline)
                        return .verdict(index, decide(row: row, facts: facts, context: context))
                    }
                }
            }
            pending?.cancel()
            while stoppedBecause == nil, !inFlight.isEmpty, let event = try await group.next() {
                if try await !take(event) { stoppedBecause = stopReason() ?? "stopped" }
            }
            if stoppedBecause == nil, let reason = stopReason() { stoppedBecause = reason }
            // The resume point is fixed before the users still in flight are dropped: they are asked again.
            let cursor = watermark()
            group.cancelAll()
            while try await group.next() != nil {}
            state.scanDone = stoppedBecause == nil
            state.scanCursor = cursor
            // The last verdicts, and the scan's end (or where a stopped scan resumes), in one write.
            try await ledger.append(batch.map { ($0.seq, $0.verdict) }, progress: state)
            batch.removeAll()
        }
        progress?(
            ProgressSnapshot(
                phase: "validate", done: Int(state.validated), total: total, errors: state.userErrors,
                elapsed: seconds(clock.now - start)))
        if let stoppedBecause { throw RunStopped(reason: stoppedBecause) }
        return state
    }

    /// What the sources say about `row`, within `deadline` for all its requests together; past it the lookups are
    /// cancelled and the user is a `fetch_error` tonight.
    static func facts(
        for row: UserRow, from source: any FactSource, deadline: Duration
    ) async -> SourceFacts {
        await withTaskGroup(of: SourceFacts?.self) { group in
            group.addTask { await source.facts(for: row) }
            group.addTask {
                do { try await Task.sleep(for: deadline) } catch { return nil }
                return .failed(
                    SourceError(
                        origin: .revenueCat, kind: .fetch,
                        message: "no complete answer within the per-user deadline of \(seconds(deadline)) s; asked again next run"))
            }
            defer { group.cancelAll() }
            while let first = await group.next() {
                if let facts = first { return facts }
            }
            return .failed(SourceError(origin: .revenueCat, kind: .fetch, message: "cancelled"))
        }
    }

    /// Applies every ledger entry not applied yet, in scan order, `applyBatchSize` rows per transaction.
    private func applyAll(_ options: RunOptions, ledger: any VerdictLedger, total: Int, start: ContinuousClock.Instant) async throws {
        let clock = ContinuousClock()
        var after: Int64 = -1
        var done = 0
        while true {
            if let reason = options.stop?.reason { throw RunStopped(reason: reason) }
            let page = try await ledger.page(after: after, limit: options.applyBatchSize)
            guard let last = page.last else { break }
            after = last.seq
            let open = page.filter { $0.outcome == nil }
            let changing = open.filter(\.verdict.changesRow).map(\.verdict)
            if !changing.isEmpty { _ = try await ledger.apply(changing) }
            try await ledger.markUnchanged(open.filter { !$0.verdict.changesRow }.map(\.seq))
            done += page.count
            progress?(ProgressSnapshot(phase: "apply", done: done, total: total, errors: 0, elapsed: seconds(clock.now - start)))
        }
    }
}

func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}
