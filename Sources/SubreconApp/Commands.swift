import AsyncHTTPClient
import Foundation
import Logging
import PostgresNIO
import RevenueCat
import SourceHTTP
import SubreconCore
import SubreconDatabase
import SubreconJob
import SubreconPorts
import SubreconReports

/// The commands behind the executable, usable from the demo and tests with an explicit environment.
public enum Commands {
    /// `subrecon migrate`.
    public static func migrate(environment env: ProcessEnvironment, logger: Logger) async throws -> ExitStatus {
        let config = try SubreconConfiguration.load(env, requireSource: false)
        try await withDatabase(config.database, logger: logger, requireSchema: false) { database in
            let applied: [Int]
            do {
                applied = try await database.migrate(requiring: requiredUserColumns(config))
            } catch let violation as UsersContract.Violation {
                throw ConfigError("users", violation.problem)
            } catch let error as DatabaseError {
                // Nothing is resumable about a migration: a migrate that cannot proceed is 78 naming why, never 75
                // (docs/CONTRACT.md, "Exit codes").
                if error.isUnavailable { throw CommandFailure(.unavailable, error.description) }
                throw CommandFailure(.config, "migrate cannot proceed: \(error.description)")
            }
            logger.info(
                "schema migrated",
                metadata: ["schema.applied": "\(applied.isEmpty ? "none (up to date)" : applied.map(String.init).joined(separator: ","))"])
        }
        return .ok
    }

    public static func loadProducts(environment env: ProcessEnvironment, logger: Logger) async throws -> ProductCatalog {
        let config = try SubreconConfiguration.load(env, requireSource: false)
        return try await withDatabase(config.database, logger: logger) { try await $0.catalog.loadCatalog() }
    }

    /// `subrecon products import [--replace] FILE`: all or nothing; with `replacing`, the file becomes the whole table.
    public static func importProducts(
        _ entries: [ProductCatalog.Entry], replacing: Bool = false, environment env: ProcessEnvironment, logger: Logger
    ) async throws {
        let config = try SubreconConfiguration.load(env, requireSource: false)
        try await withDatabase(config.database, logger: logger) { try await $0.catalog.upsertProducts(entries, replacing: replacing) }
    }

    /// How far `--as-of` may lie from now in a run that applies (CONTRACT "Exit codes"): 24 h back, 15 min ahead.
    public static let applyWindow: (past: TimeInterval, future: TimeInterval) = (86_400, 900)
    /// Verdicts older than this are never applied by `--resume` / `--accept-downgrades`.
    public static let maxVerdictAge: TimeInterval = 86_400

    /// `subrecon run`: configuration (78), the as-of guard (64), database reachable (69), schema present, shard
    /// lock (4), the job. With `resume`, continues that run from its ledger with the selection it stored
    /// (`--resume RUN_ID`), unless its verdicts are older than `maxVerdictAge` (64). `now` is the wall clock the
    /// guards judge by (injected by tests).
    public static func run(
        environment env: ProcessEnvironment, options: RunOptions, logger: Logger,
        progress: (@Sendable (ProgressSnapshot) -> Void)? = nil, resume resumeID: String? = nil, now: Date = Date()
    ) async throws -> RunResult {
        let config = try SubreconConfiguration.load(env, requireSource: true)
        // The options as asked, in the configured store environment; `--resume` replaces the stored part below.
        var requested = options
        requested.environment = config.environment
        if requested.stop == nil { requested.stop = StopSignal() }
        if resumeID == nil { try checkAsOf(requested, now: now) }
        let newRunID = resumeID ?? ReconcileJob.makeRunID(startedAt: now, shard: requested.shard)
        var logger = logger
        logger[metadataKey: "run.id"] = "\(newRunID)"  // on every line of the run, the clients' and the store's too
        // A graceful shutdown of a host's ServiceGroup around this call stops the run between steps, like SIGTERM.
        let stop = requested.stop
        let onShutdown: @Sendable () -> Void = { stop?.stop(reason: "graceful shutdown requested") }
        return try await withDatabase(config.database, logger: logger, onGracefulShutdown: onShutdown) { [logger, requested] unchecked in
            // The app's own `users` (CONTRACT "Database"): its columns are checked once, before the run writes anything.
            let database = try await checkedUsers(unchecked, configuration: config)
            try await preflight(database, writing: !requested.dryRun)
            let start = try await RunStart.resolve(requested, runID: newRunID, resuming: resumeID, journal: database.runs, now: now)
            return try await withJob(
                config: config, options: start.options, ports: JobPorts(postgres: database), reads: AdapterReads(postgres: database),
                logger: logger, progress: progress
            ) { job in
                guard
                    let result = try await ShardLock.withLock(
                        settings: config.database, shard: start.options.shard, logger: logger,
                        onLost: { stop?.stop(reason: $0) },
                        {
                            try await job.run(start.options, runID: start.runID, startedAt: start.startedAt, resume: start.progress)
                        })
                else {
                    throw CommandFailure(
                        .shardLocked,
                        "another run holds shard \(start.options.shard) or one overlapping it (a different shard count); nothing done")
                }
                return result
            }
        }
    }

    /// The job as `run` composes it over `ports` — the configured sources over one HTTP client, each behind its share
    /// of its rate budget, their database reads from `reads` — handed to `body` for as long as the client lives.
    /// `run` calls it inside its database session and shard lock; the job's tests call it over ports in memory.
    public static func withJob<T: Sendable>(
        config: SubreconConfiguration, options: RunOptions, ports: JobPorts, reads: AdapterReads,
        logger: Logger, progress: (@Sendable (ProgressSnapshot) -> Void)? = nil, _ body: (ReconcileJob) async throws -> T
    ) async throws -> T {
        let stats = RequestStats(health: SourceHealthBoard(clock: options.tuning.healthClock))
        return try await HTTPClient.withHTTPClient(configuration: httpConfiguration(concurrency: options.concurrency)) { http in
            let (source, notes) = try factSource(config: config, options: options, http: http, stats: stats, reads: reads, logger: logger)
            return try await body(
                ReconcileJob(ports: ports, source: source, stats: stats, sourcesNote: notes, logger: logger, progress: progress))
        }
    }

    /// What a `run` starts from: a new run with the options as asked, or (`--resume RUN_ID`) the stored run with its
    /// stored selection over them, its first start and its progress.
    public struct RunStart: Sendable {
        public var options: RunOptions
        public var runID: String
        public var startedAt: Date
        public var progress: RunProgress?

        public static func resolve(
            _ requested: RunOptions, runID: String, resuming resumeID: String?, journal: any RunJournal, now: Date
        ) async throws -> RunStart {
            guard let resumeID else { return RunStart(options: requested, runID: runID, startedAt: now, progress: nil) }
            let stored = try await Commands.resumable(
                resumeID, journal: journal, dryRun: requested.dryRun, acceptingDowngrades: requested.acceptDowngrades, now: now)
            var options = requested
            try stored.selection.apply(to: &options)
            return RunStart(options: options, runID: resumeID, startedAt: stored.startedAt, progress: stored.progress)
        }
    }

    /// The run's fact source with one shared rate gate per source (the `--*-rps` values are the app's whole budget:
    /// this shard takes 1/N of each), and the summary's line per source naming its budget.
    static func factSource(
        config: SubreconConfiguration, options: RunOptions, http: HTTPClient, stats: RequestStats,
        reads: AdapterReads, logger: Logger
    ) throws -> (StoreFactSource, [String: String]) {
        var budgets: [(FactOrigin, Double, Bool)] = [
            (.revenueCat, options.revenueCatRequestsPerSecond, config.revenueCat != nil)
        ]
        for kind in StoreRegistry.stores {
            let rate = options.requestsPerSecond[kind.origin] ?? kind.defaultRequestsPerSecond(config.environment)
            budgets.append((kind.origin, rate, config.stores[kind.origin] != nil))
        }
        var gates: [FactOrigin: any RequestGate] = [:]
        for (origin, rate, _) in budgets {
            gates[origin] = SharedRateLimiter<ContinuousClock>.perSecond(RequestBudget.perShard(rate, shards: options.shard.count))
        }
        let v2Rate = options.revenueCatV2RequestsPerSecond
        let source = try StoreFactSource(
            configuration: config, httpClient: http, stats: stats, logger: logger, gates: gates,
            receipts: CoalescedReceiptLookup(reads.receipts),
            refundsSeen: reads.refundsSeen,
            revenueCatV2Gate: SharedRateLimiter<ContinuousClock>.perSecond(RequestBudget.perShard(v2Rate, shards: options.shard.count)),
            knownCustomers: RevenueCatMemory(reads.knownCustomers, writes: !options.dryRun))
        var notes = source.notes
        for (origin, rate, configured) in budgets where configured {
            notes[origin.rawValue]? += "; " + RequestBudget.describe(rate, shard: "\(options.shard)", shards: options.shard.count)
        }
        if config.revenueCat?.v2 != nil {
            notes["revenuecat"]? += "; v2 " + RequestBudget.describe(v2Rate, shard: "\(options.shard)", shards: options.shard.count)
        }
        return (source, notes)
    }

    /// What `--resume RUN_ID` / `--accept-downgrades RUN_ID` continue: the stored run, if it may be continued (CONTRACT "Commands",
    /// 5.8): not a dry run, not completed, started at most 24 h ago, with its selection stored; for
    /// `--accept-downgrades`, a run that stopped at the safety valve after validating every candidate (CONTRACT "Hostile answers and bounded work").
    /// Else exit 64, before anything is touched.
    static func resumable(
        _ runID: String, journal: any RunJournal, dryRun: Bool, acceptingDowngrades: Bool = false, now: Date
    ) async throws -> (selection: StoredSelection, startedAt: Date, progress: RunProgress) {
        guard !dryRun else { throw CommandFailure(.usage, "--resume cannot be combined with --dry-run") }
        guard let stored = try await journal.storedRun(id: runID) else {
            throw CommandFailure(.usage, "no run \(runID) in reconcile_runs")
        }
        guard stored.record.status != .completed else {
            throw CommandFailure(.usage, "run \(runID) already completed; nothing to resume")
        }
        if acceptingDowngrades, stored.record.status != .valveTripped || !stored.progress.scanDone {
            throw CommandFailure(
                .usage,
                "run \(runID) did not stop at its safety valve after validating every candidate (status "
                    + "\(stored.record.status.rawValue)): nothing to accept; finish it with --resume \(runID) first")
        }
        let age = now.timeIntervalSince(stored.record.startedAt)
        guard age <= maxVerdictAge else {
            throw CommandFailure(
                .usage,
                "run \(runID) started \(Int(age / 3600)) h ago: its verdicts are older than 24 h and are never applied; "
                    + "start a new run instead (`subrecon run` without --resume/--accept-downgrades)")
        }
        guard let selection = stored.selection.flatMap({ try? StoredSelection.decode($0) }) else {
            throw CommandFailure(.usage, "run \(runID) has no stored selection (dry runs cannot be resumed)")
        }
        return (selection, stored.record.startedAt, stored.progress)
    }

    /// The identifier columns of the stores configured (CONTRACT "Database"): optional in `users` until their database is.
    static func requiredUserColumns(_ config: SubreconConfiguration) -> Set<String> {
        Set(StoreRegistry.stores.filter { config.stores[$0.origin] != nil }.flatMap { $0.identifierColumns.map(\.name) })
    }

    /// `database` reading and writing `users` as the relation the connection resolves is (a table or an app's view,
    /// optional columns present or not); a relation missing a contract column is exit 78, one line naming them all.
    static func checkedUsers(
        _ database: SubscriptionDatabase, configuration config: SubreconConfiguration, writable: Bool = true
    ) async throws -> SubscriptionDatabase {
        do {
            return database.with(users: try await database.checkUsers(requiring: requiredUserColumns(config), writable: writable))
        } catch let violation as UsersContract.Violation {
            throw ConfigError("users", violation.problem)
        }
    }

    /// What `run` checks as its own role before a run is recorded or any store is asked (docs/CONTRACT.md, "What run
    /// checks first"): a database that takes no writes is 69 for a run that applies (a dry run reads on); missing
    /// privileges or row-level security without a policy for the role are 78, every cause on one line.
    static func preflight(_ database: SubscriptionDatabase, writing: Bool) async throws {
        if writing, let state = try await database.readOnlyState() {
            throw CommandFailure(
                .unavailable,
                "the database is read-only: \(state); a run that applies cannot write there (no run was recorded, "
                    + "nothing to resume): point DATABASE_URL at the primary, or add --dry-run to look")
        }
        let problems = try await database.accessProblems(writing: writing)
        guard problems.isEmpty else {
            throw ConfigError("DATABASE_URL", "(the job's role): " + problems.joined(separator: "; ") + "; nothing done")
        }
    }

    /// The as-of guard of CONTRACT "Exit codes": a run that applies judges the present.
    static func checkAsOf(_ options: RunOptions, now: Date) throws {
        guard !options.dryRun && !options.applyPast else { return }
        let offset = options.asOf.timeIntervalSince(now)
        if offset < -applyWindow.past {
            throw CommandFailure(
                .usage,
                "--as-of \(ISO8601.string(options.asOf)) is more than 24 h before now: a run that applies judges the present "
                    + "(users refunded since would be restored); add --dry-run to look, or --apply-past for a deliberate replay")
        }
        if offset > applyWindow.future {
            throw CommandFailure(
                .usage,
                "--as-of \(ISO8601.string(options.asOf)) is more than 15 min after now: a run that applies judges the present; "
                    + "add --dry-run to look, or --apply-past for a deliberate replay")
        }
    }

    static func httpConfiguration(concurrency: Int) -> HTTPClient.Configuration {
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: max(8, concurrency * 2))
        configuration.timeout = .init(connect: .seconds(10), read: .seconds(30))
        return configuration
    }
}
