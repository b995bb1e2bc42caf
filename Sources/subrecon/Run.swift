import ArgumentParser
import Foundation
import Logging
import SubreconApp
import SubreconCommand
import SubreconCore
import SubreconDatabase
import SubreconDemo
import SubreconJob
import SubreconPorts
import SubreconReports

struct Run: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Scan candidates, re-validate, apply, report.")

    @Option(help: "The instant the job judges \"now\" by (ISO 8601).") var asOf: TypedOption<Instant>?
    @Flag(help: "Decide and report; change nothing in the database, emit no intents.") var dryRun = false
    @Flag(help: "Apply the truth of an --as-of more than 24 h before now (or 15 min after it): deliberate replays and tests.")
    var applyPast = false
    @Option(help: "Seconds a user gets for all its requests together; past it the user is fetch_error tonight.")
    var userTimeout: Double = Double(RunOptions.Default.userDeadline.components.seconds)
    @Option(help: "nightly or backfill.") var mode = TypedOption<CandidateQuery.Mode>("nightly")
    @Option(help: "One user id a line; restricts the run to them.") var usersFile: String?
    @Option(help: "Backfill: only users whose subscription ends after this instant.") var endAfter: TypedOption<Instant>?
    @Option(help: "Backfill: only users whose subscription ends before this instant.") var endBefore: TypedOption<Instant>?
    @Option(help: "Users validated at once.") var concurrency: Int = RunOptions.Default.concurrency
    @Option(help: "Stop after N candidates.") var limit: Int?
    @Option(help: "I/N: only users whose stable hash of id mod N == I.") var shard = TypedOption<ShardSpec>("0/1")
    @Option(help: "Where run folders are written.") var reportDir: String = "reports"
    @Option(help: "Apply nothing if more than this share of tier holders would lose their tier.") var maxDowngradeRatio: Double = RunOptions
        .Default.maxDowngradeRatio
    @Option(help: "How far back lapsed users are re-checked.") var lookbackDays: Int = RunOptions.Default.lookbackDays
    @Option(help: "Rolling sweep: every tier holder is re-validated at least once every D nights (0 = off).")
    var sweepDays: Int = RunOptions.Default.sweepDays
    @Option(help: "Sweep of rows holding no tier: each is re-validated at least once every D nights (0 = off).")
    var sweepFreeDays: Int = RunOptions.Default.sweepFreeDays
    @Option(
        help:
            "Start of every store feed's window (ISO 8601); default: per feed, the earliest instant this shard has not covered, at most 30 days back; a feed never read: this shard's last completed nightly run (at most 7 days back), else 3 days."
    )
    var feedsSince: TypedOption<Instant>?
    @Option(help: "Also write the run's Prometheus metrics to this file, atomically (node_exporter textfile collector).")
    var metricsFile: String?
    @Option(help: "Also PUT the run's metrics to this Pushgateway (BASE/metrics/job/subrecon/shard/I_N).")
    var pushgatewayURL: String?
    @Option(help: "RevenueCat requests per second for the whole app; a --shard I/N run takes 1/N (0 = unlimited).")
    var revenuecatRps: Double = RunOptions.Default.revenueCatRequestsPerSecond
    @Option(help: "RevenueCat API v2 requests per second for the whole app; a --shard I/N run takes 1/N (0 = unlimited).")
    var revenuecatV2Rps: Double = RunOptions.Default.revenueCatV2RequestsPerSecond
    @Option(
        help:
            "App Store Server API requests per second for the whole app; a --shard I/N run takes 1/N (default 50 production, 5 sandbox; 0 = unlimited)."
    )
    var appStoreRps: Double?
    @Option(help: "Google Play Developer API requests per second for the whole app; a --shard I/N run takes 1/N (0 = unlimited).")
    var googlePlayRps: Double = StoreRegistry.defaultRequestsPerSecond(.googlePlay)
    @Option(help: "Stripe requests per second for the whole app; a --shard I/N run takes 1/N (0 = unlimited).")
    var stripeRps: Double = StoreRegistry.defaultRequestsPerSecond(.stripe)
    @Option(help: "Refund review: list users with at least this many refunds seen within --refund-review-days.")
    var refundReviewCount: Int = RunOptions.Default.refundReviewCount
    @Option(help: "Refund review: the window, in days before --as-of, whose refunds count.") var refundReviewDays: Int = RunOptions.Default
        .refundReviewDays
    @Option(help: "Continue run RUN_ID (killed, failed, or stopped by the safety valve) from where it stopped.") var resume: String?
    // The store feeds' own deadline.
    @Option(help: "Seconds each store feed's read may take (0 < S <= 3600); a feed cut off by it is reported failed.")
    var feedTimeout: Double = Double(RunOptions.Default.feedDeadline.components.seconds)
    @Option(help: "Continue run RUN_ID, whose safety valve tripped, applying its downgrades (after review).") var acceptDowngrades: String?

    /// The usage error in the options, as the line to print; nil when there is none. Checked at the start of `run()`
    /// (not in `validate()`, which exits before the metrics could be written): a usage error is exit 64 like any
    /// other, with its metrics written (docs/CONTRACT.md, `--metrics-file`).
    func usageProblem() -> String? {
        guard mode.value != nil else { return "--mode must be nightly or backfill" }
        if let problem = rangeProblem() { return problem }
        guard shard.value.map({ OptionRanges.shardCount.contains($0.count) }) == true else {
            return "--shard must be I/N with 0 <= I < N and N in 1...\(OptionRanges.shardCount.upperBound)"
        }
        if let problem = pushgatewayProblem() { return problem }
        if let resume, let acceptDowngrades, resume != acceptDowngrades {
            return "--resume and --accept-downgrades name different runs"
        }
        if (resume != nil || acceptDowngrades != nil) && dryRun { return "--resume cannot be a dry run" }
        if (endAfter != nil || endBefore != nil) && mode.value != .backfill { return "--end-after/--end-before need --mode backfill" }
        return nil
    }

    /// A `--pushgateway-url` that is not one to push to (not http(s), or carrying credentials).
    func pushgatewayProblem() -> String? {
        guard let pushgatewayURL else { return nil }
        if URLComponents(string: pushgatewayURL)?.host == nil || !pushgatewayURL.hasPrefix("http") {
            return "--pushgateway-url must be an http(s) URL, e.g. http://pushgateway:9091"
        }
        if MetricsPublisher.hasUserInfo(pushgatewayURL) {
            return
                "--pushgateway-url must not carry credentials; set SUBRECON_PUSHGATEWAY_USER and SUBRECON_PUSHGATEWAY_PASSWORD (or _FILE)"
        }
        return nil
    }

    /// The first option outside its documented range (`OptionRanges`, README "Options"), as the line to print.
    func rangeProblem() -> String? {
        typealias R = OptionRanges
        let dates = [("--as-of", asOf), ("--end-after", endAfter), ("--end-before", endBefore), ("--feeds-since", feedsSince)].map {
            ($0.0, $0.1?.text)
        }
        var checks: [String?] = dates.map { name, value in value.flatMap { R.dateProblem(name, $0) } }
        checks += [
            R.problem("--concurrency", concurrency, R.concurrency), limit.flatMap { R.problem("--limit", $0, R.limit) },
            R.problem("--lookback-days", lookbackDays, R.lookbackDays), R.problem("--sweep-days", sweepDays, R.sweepDays),
            R.problem("--sweep-free-days", sweepFreeDays, R.sweepFreeDays),
            R.problem("--max-downgrade-ratio", maxDowngradeRatio, R.maxDowngradeRatio),
            R.problem("--user-timeout", userTimeout, R.userTimeoutSeconds),
            R.problem("--feed-timeout", feedTimeout, R.userTimeoutSeconds),
            R.problem("--revenuecat-rps", revenuecatRps, R.requestsPerSecond),
            R.problem("--revenuecat-v2-rps", revenuecatV2Rps, R.requestsPerSecond),
            appStoreRps.flatMap { R.problem("--app-store-rps", $0, R.requestsPerSecond) },
            R.problem("--google-play-rps", googlePlayRps, R.requestsPerSecond),
            R.problem("--stripe-rps", stripeRps, R.requestsPerSecond),
            R.problem("--refund-review-count", refundReviewCount, R.refundReviewCount),
            R.problem("--refund-review-days", refundReviewDays, R.refundReviewDays),
        ]
        return checks.compactMap { $0 }.first
    }

    func run() async throws {
        let env = Startup.environment()
        let logger = Startup.logger(env)
        let stop = StopSignal()
        let metrics = metricsTargets(env)
        if let problem = usageProblem() {
            await MetricsPublisher.publishExit(.usage, to: metrics, logger: logger)
            throw ValidationError(problem)  // printed with the usage, exit 64, as swift-argument-parser's own
        }
        // The signals are watched until the process ends (the summary and the metrics included), as before; a forced
        // exit (a second signal, or no clean end in time) still publishes its 75.
        try await Signals.stoppingOnTermination(
            stop, beforeHardExit: { await MetricsPublisher.publishExit($0, to: metrics, logger: logger) }
        ) {
            try await runGuarded(env: env, logger: logger, stop: stop, metrics: metrics)
        }
    }

    /// Where the metrics go, with the shard and dry-run flag as given: what an exit without a run folder publishes. A
    /// `--pushgateway-url` that is itself the usage error is not pushed to (the shard, when it is, reads as 0/1).
    func metricsTargets(_ env: ProcessEnvironment) -> MetricsTargets {
        MetricsTargets(
            metricsFile: metricsFile, pushgatewayURL: pushgatewayProblem() == nil ? pushgatewayURL : nil,
            credentials: pushgatewayURL == nil ? nil : try? PushgatewayCredentials.load(env), shard: shard.value ?? .all,
            dryRun: dryRun, reportDirectory: URL(fileURLWithPath: reportDir))
    }

    /// Runs the job and publishes its metrics on every exit (docs/CONTRACT.md, `--metrics-file`): the run folder's
    /// exposition when the run finished, else one stating the exit code (64, 69, 75, 78, 4), so an alert on the exit
    /// code fires for a night that failed at start or stopped.
    private func runGuarded(env: ProcessEnvironment, logger: Logger, stop: StopSignal, metrics: MetricsTargets) async throws {
        try await Startup.guarded(logger) {
            let result: RunResult
            do {
                result = try await runJob(env: env, logger: logger, stop: stop)
            } catch {
                ProgressLine.clear()
                await MetricsPublisher.publishExit(ExitStatus.failure(error).status, to: metrics, logger: logger)
                throw error
            }
            ProgressLine.clear()
            print(TerminalSummary.text(result.summary, folder: result.folder))
            await MetricsPublisher.publish(
                runFolder: result.folder, shard: ShardSpec(parsing: result.summary.shard) ?? metrics.shard, metricsFile: metricsFile,
                pushgatewayURL: pushgatewayURL, credentials: metrics.credentials, logger: logger)
            return result.exitStatus
        }
    }

    /// The options from the flags, then `Commands.run`.
    private func runJob(env: ProcessEnvironment, logger: Logger, stop: StopSignal) async throws -> RunResult {
        // Pushgateway credentials set wrongly are a 78 naming the variable, before anything is touched.
        if pushgatewayURL != nil { _ = try PushgatewayCredentials.load(env) }
        var options = RunOptions(asOf: asOf?.value?.date ?? Date(), reportDirectory: URL(fileURLWithPath: reportDir))
        options.dryRun = dryRun
        options.mode = mode.value ?? .nightly
        options.endAfter = endAfter?.value?.date
        options.endBefore = endBefore?.value?.date
        options.concurrency = concurrency
        options.limit = limit
        options.shard = shard.value ?? .all
        options.maxDowngradeRatio = maxDowngradeRatio
        options.lookbackDays = lookbackDays
        options.sweepDays = sweepDays
        options.sweepFreeDays = sweepFreeDays
        options.feedsSince = feedsSince?.value?.date
        options.revenueCatRequestsPerSecond = revenuecatRps
        options.revenueCatV2RequestsPerSecond = revenuecatV2Rps
        options.requestsPerSecond[.appStore] = appStoreRps
        options.requestsPerSecond[.googlePlay] = googlePlayRps
        options.requestsPerSecond[.stripe] = stripeRps
        options.refundReviewCount = refundReviewCount
        options.refundReviewDays = refundReviewDays
        if let usersFile { options.userIDs = try UsersFile.read(path: usersFile) }
        options.acceptDowngrades = acceptDowngrades != nil
        options.applyPast = applyPast
        options.userDeadline = .milliseconds(Int64(userTimeout * 1000))
        options.feedDeadline = .milliseconds(Int64(feedTimeout * 1000))
        options.stop = stop
        return try await Commands.run(
            environment: env, options: options, logger: logger, progress: ProgressLine.makeIfTerminal(),
            resume: resume ?? acceptDowngrades)
    }
}

struct Report: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Re-render every report file of a past run, byte for byte, from the database (a new folder unless --overwrite).")
    @Argument(help: "The run id (a folder name under the report directory).") var runID: String
    @Option(help: "Where the run folder is written.") var reportDir: String = "reports"
    @Flag(help: "Rewrite REPORT_DIR/RUN_ID itself; without it an existing run folder is kept and RUN_ID.report-N is written.")
    var overwrite = false

    func run() async throws {
        let env = Startup.environment()
        let logger = Startup.logger(env)
        try await Startup.guarded(logger) {
            let result = try await Commands.report(
                environment: env, runID: runID, reportDirectory: URL(fileURLWithPath: reportDir), overwrite: overwrite, logger: logger)
            print(TerminalSummary.text(result.summary, folder: result.folder))
            return .ok
        }
    }
}

struct Demo: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract:
            "The embedded default: a throwaway PostgreSQL and local store simulators, sample users, a run with every source and one without RevenueCat."
    )

    @Option(help: "Where the demo's run folder is written.") var reportDir: String = "reports"
    @Flag(help: "Keep the throwaway database running and print how to reach it.") var keep = false
    @Option(help: "Also print `subrecon explain` for this sample user (e.g. demo-39-apple-feed-refund), before the run that holds it.")
    var explain: String?

    func run() async throws {
        let env = Startup.environment()
        let logger = Startup.logger(env)
        try await Startup.guarded(logger) {
            // Prints each run's story and summary as it finishes; the demo seeds errors and a forged signature on
            // purpose, so it succeeds when both runs completed.
            let result = try await DemoRunner.run(
                environment: env, reportDirectory: URL(fileURLWithPath: reportDir), keep: keep, explain: explain, logger: logger,
                progress: ProgressLine.makeIfTerminal(),
                say: {
                    ProgressLine.clear()
                    print($0)
                })
            return result.exitStatus
        }
    }
}
