import Foundation
import Logging
import SubreconCore
import SubreconPorts
import SubreconReports

/// The job of CONTRACT "Sources and the decision", in phases with one job each: validate (scan, ask the sources, decide, append to the ledger),
/// the safety valve (a pure decision in `SubreconCore`), apply, and report; `RunLifecycle` owns the run's record,
/// its clock and the mapping of failures to exit codes.
///
/// A run killed at any point resumes from its ledger (`resume:`) without asking the sources again for users already
/// validated and without writing anyone twice. Memory is bounded by the concurrency and batch sizes, not by the
/// number of candidates.
public struct ReconcileJob: Sendable {
    public var ports: JobPorts
    public var source: any FactSource
    public var stats: RequestStats
    public var sourcesNote: [String: String]
    public var logger: Logger
    public var progress: (@Sendable (ProgressSnapshot) -> Void)?
    /// The run's clock for the instants it records (injected in tests).
    public var now: @Sendable () -> Date

    public init(
        ports: JobPorts, source: any FactSource, stats: RequestStats, sourcesNote: [String: String],
        logger: Logger, progress: (@Sendable (ProgressSnapshot) -> Void)? = nil, now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.ports = ports
        self.source = source
        self.stats = stats
        self.sourcesNote = sourcesNote
        self.logger = logger
        self.progress = progress
        self.now = now
    }

    public static func makeRunID(startedAt: Date, shard: ShardSpec) -> String {
        let stamp = ISO8601.string(startedAt).prefix(19).replacingOccurrences(of: "-", with: "").replacingOccurrences(of: ":", with: "")
        let random = String(UInt32.random(in: 0...UInt32.max), radix: 16)
        let shardPart = shard.count > 1 ? "-s\(shard.index)of\(shard.count)" : ""
        return "\(stamp)Z\(shardPart)-\(random)"
    }

    /// Runs (or, with `resume`, continues) run `runID`.
    public func run(_ options: RunOptions, runID: String, startedAt: Date = Date(), resume: RunProgress? = nil) async throws -> RunResult {
        var logger = logger
        logger[metadataKey: "run.id"] = "\(runID)"
        let lifecycle = RunLifecycle(
            runID: runID, options: options, journal: options.dryRun ? nil : ports.journal, logger: logger, now: now,
            startedAt: startedAt)
        let folder = try lifecycle.createFolder()
        var summary = lifecycle.newSummary(sources: sourcesNote)
        let start = ContinuousClock.now
        // Whether `--resume` can continue this run if it fails: a run being resumed is already in `reconcile_runs`; a
        // new one once `begin` recorded it; a dry run never (CONTRACT "Exit codes": 75 only for a resumable run).
        var recorded = resume != nil && !options.dryRun
        if recorded { options.stop?.recorded(run: runID) }
        do {
            let (context, ledger) = try await prepare(options, runID: runID, folder: folder, into: &summary, logger: logger)
            try await lifecycle.begin(resuming: resume)
            recorded = !options.dryRun

            var state = resume ?? RunProgress()
            let (harvest, selection) = try await readFeeds(options, runID: runID, resuming: resume != nil, into: &summary, logger: logger)
            if !state.scanDone {
                var validation = ValidationPhase(
                    candidates: ports.candidates, source: source, ledger: ledger, context: context, options: options,
                    selection: selection, progress: progress)
                validation.harvest = harvest
                state = try await validation.run(from: state, start: start)
            }
            _ = try await TransferStep(ledger: ledger, candidates: ports.candidates, options: options).run()
            summary.timings.validateSeconds = seconds(ContinuousClock.now - start)
            let valve = SafetyValve(threshold: options.maxDowngradeRatio, heldTier: state.heldTier, wouldLoseTier: state.wouldLoseTier)
            summary.valve = valve
            lifecycle.logValve(valve)
            let applyStart = ContinuousClock.now
            if !options.dryRun && valve.allowsApply(acceptingDowngrades: options.acceptDowngrades) {
                _ = try await ApplyPhase(ledger: ledger, options: options, progress: progress).run(
                    total: Int(state.validated), start: applyStart)
            }
            summary.timings.applySeconds = seconds(ContinuousClock.now - applyStart)

            let report = ReportPhase(history: ports.history, reports: ports.reports, logger: logger)
            try await ReportPhase.render(ledger: ledger, runID: runID, folder: folder, into: &summary, batch: options.tuning.applyBatchSize)
            try Self.report(orphans: harvest.orphans, folder: folder, into: &summary)
            if let refunds = ports.refunds {
                try await RefundReviewStep(records: refunds, options: options, logger: logger).run(
                    ledger: ledger, runID: runID, folder: folder, into: &summary)
            }
            // A failed feed is reported and the run goes on: exit 1 at most (CONTRACT "Which users a run asks about").
            let failedFeeds = (summary.feeds ?? [:]).values.filter { $0.error != nil }.count
            let down = reportSourcesDown(into: &summary, logger: logger)
            let end = RunStatus.concluding(
                valve: valve, acceptingDowngrades: options.acceptDowngrades, userErrors: summary.errors + failedFeeds + down)
            summary.requests = stats.snapshot
            lifecycle.conclude(&summary, end: end, totalSeconds: seconds(ContinuousClock.now - start))
            try await report.write(summary, folder: folder, shard: options.shard)
            try await lifecycle.finish(summary, end: end)
            return RunResult(summary: summary, folder: folder.url, exitStatus: end.exitStatus)
        } catch {
            throw await lifecycle.fail(error, recorded: recorded)
        }
    }

    /// The decision's context and the run's ledger, before the run is recorded: the stored catalog is checked
    /// (`StoredCatalog`: a row `products import` would refuse is a 78 here, before any store is asked), and how the
    /// users file met `users` (`matchUsersFile`).
    private func prepare(
        _ options: RunOptions, runID: String, folder: RunFolder, into summary: inout RunSummary, logger: Logger
    ) async throws -> (DecisionContext, any VerdictLedger) {
        let catalog = try StoredCatalog.checked(try await ports.catalog.loadCatalog())
        let context = DecisionContext(asOf: options.asOf, environment: options.environment, catalog: catalog)
        let ledger: any VerdictLedger =
            options.dryRun
            ? try FileLedger(url: folder.url.appendingPathComponent(".verdicts.jsonl"))
            : DatabaseLedger(database: ports.verdicts, runID: runID)
        summary.usersFile = try await matchUsersFile(options, logger: logger)
        return (context, ledger)
    }

    /// `--users-file`'s ids against `users`, before the run is recorded (CONTRACT "Commands"): how many of this
    /// shard's ids no row has, for the summary and the log; a file none of whose ids has a row (another system's
    /// file, the wrong database) is exit 66, nothing done, never a clean night that selected nobody.
    private func matchUsersFile(_ options: RunOptions, logger: Logger) async throws -> RunSummary.UsersFile? {
        guard let ids = options.userIDs else { return nil }
        let mine = ids.filter(options.shard.contains)
        let match = RunSummary.UsersFile(ids: mine.count, unmatched: try await ports.candidates.unmatchedIDs(mine))
        if match.matchesNothing {
            throw CommandFailure(
                .noInput,
                "--users-file: none of its \(match.ids) id\(match.ids == 1 ? "" : "s")\(options.shard.count > 1 ? " in this shard" : "") "
                    + "has a row in users (\(match.unmatchedNamed)); check the file and "
                    + "DATABASE_URL; nothing done")
        }
        if let words = match.unmatchedWords {
            logger.warning(
                "users file ids match no row",
                metadata: ["ids": "\(match.ids)", "unmatched": "\(match.unmatched)", "detail": "\(words)"])
        }
        return match
    }

    /// The night's orphans (CONTRACT "Whose purchase it is") into `orphans.csv` (header only when none) and `summary.json`. A resumed run
    /// reads no feed again: it lists those its first attempt kept (`reconcile_orphans`).
    static func report(orphans: [Orphan], folder: RunFolder, into summary: inout RunSummary) throws {
        try folder.writeOrphans(orphans)
        if !orphans.isEmpty { summary.orphans = RunSummary.Orphans(orphans) }
    }

    /// The sources declared down tonight, into the summary and the log; returns how many. A source declared down is
    /// exit 1 at most too (its users are fetch_error, untouched).
    func reportSourcesDown(into summary: inout RunSummary, logger: Logger) -> Int {
        let down = stats.health?.sourcesDown ?? []
        if !down.isEmpty { summary.sourcesDown = down }
        for source in down {
            logger.error(
                "source declared down; its remaining users were not asked",
                metadata: ["source": "\(source.source)", "since": "\(source.since)", "error": "\(source.reason)"])
        }
        return down.count
    }

    /// The store feeds and inventories of a nightly run (`FeedPhase`) and the sweep's share: their users join the
    /// scan. Returns tonight's links and feed refunds by user and the night's orphans, and the selection to scan: the
    /// run's own, joined by its recorded candidates (feeds, links and the sweep's share, each with its reasons), or a dry
    /// run's feed users kept in memory. A resumed run keeps the feed candidates, links, orphans and refunds its first
    /// attempt recorded and reads no feed again.
    private func readFeeds(
        _ options: RunOptions, runID: String, resuming: Bool, into summary: inout RunSummary, logger: Logger
    ) async throws -> (FeedHarvest, CandidateQuery) {
        guard let feeds = ports.feeds, options.readsFeeds else { return (FeedHarvest(), options.selection()) }
        var harvest = FeedHarvest()
        if !resuming {
            summary.feeds = try await FeedPhase(
                feeds: feeds, refunds: ports.refunds, links: ports.links, source: source, options: options, runID: runID,
                logger: logger
            ).run(into: &harvest)
        } else if !options.dryRun {
            harvest.orphans = try await ports.links?.orphans(runID: runID) ?? []
            // Kept by store transaction only: a resumed run's rows carry them without the identifier the feed named.
            // Refunds no row held are not kept (`refunds_seen` keeps a user's): a resumed run has none of them.
            let kept = try await ports.refunds?.feedRefunds(runID: runID) ?? [:]
            harvest.refunds = kept.mapValues { $0.map { FeedRefundFact(identifier: nil, refund: $0) } }
        }
        if options.dryRun {
            // A dry run writes nothing: its feed users and links stay in memory and the sweep is tested inline.
            return (harvest, options.selection(named: harvest.named))
        }
        let selection = options.selection(recordedAs: runID)
        // The sweep's share is recorded with the feeds' users (again on resume: the same users, idempotent).
        try await feeds.recordSweep(selection, runID: runID)
        harvest.named = [:]  // the scan reads the recorded candidates' reasons with their rows
        harvest.links = try await ports.links?.links(runID: runID) ?? [:]
        return (harvest, selection)
    }
}
