import ArgumentParser
import Foundation
import Logging
import StoreSimulator
import SubreconApp
import SubreconJob

/// `subrecon-bench`: the job against the loopback simulator at a given latency and rate limit, or the candidate
/// scan alone over a large table. See BENCHMARKS.md.
@main
struct SubreconBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "subrecon-bench",
        abstract: "Measure subrecon against the loopback store simulator (users/s, requests/s, efficiency, peak RSS).")

    /// As `subrecon` does, before anything else: the async work runs on NIO's event loops (`EventLoopConcurrency`).
    static func main() async {
        EventLoopConcurrency.install()
        await main(nil)
    }

    @Option(help: "Users in the table.") var users = 5000
    @Option(help: "Nightly candidates among them (default: every user).") var candidates: Int?
    @Option(help: "Simulated latency of every answer, in milliseconds.") var latencyMs = 100
    @Option(help: "Simulator rate limit per source in requests/s (0 = unlimited); also the job's --revenuecat-rps/--app-store-rps.")
    var rateLimit = 50.0
    @Option(help: "Users validated at once in the concurrent row.") var concurrency = 16
    @Option(help: "Candidates in the sequential comparison row (concurrency 1); 0 skips it.") var sequentialUsers = 500
    @Flag(help: "RevenueCat only: no App Store credentials (no Apple calls, no JWS verification).") var noAppStore = false
    @Flag(help: "Time the candidate scan alone (seed, stream every candidate, EXPLAIN ANALYZE one page).") var scanOnly = false
    @Option(help: "Scan page size.") var pageSize = 500
    @Option(help: "With --scan-only: also time the rolling sweep of D nights, tested inline per page and recorded once per run.")
    var sweepDays = 0
    @Option(
        help: """
            Instead of the concurrency and sequential rows: N shard processes at once (--shard 0/N ... N-1/N, the \
            Kubernetes CronJob layout), each given the app's whole --rate-limit as its --*-rps (each takes 1/N).
            """)
    var shards = 0
    @Flag(help: "With --shards: add a row where every shard paces at the whole budget (N times oversubscribed).")
    var overBudget = false
    @Flag(help: "Time `subrecon finance` over a year of seeded nightly runs (with --finance-nights, --finance-verdicts, ...).")
    var financeYear = false
    @Option(help: "With --finance-year: nightly runs.") var financeNights = 365
    @Option(help: "With --finance-year: ledger entries per night.") var financeVerdicts = 20_000
    @Option(help: "With --finance-year: applied restores per night.") var financeApplied = 400
    @Option(help: "With --finance-year: billing-issue users per night.") var financeAtRisk = 200
    @Option(help: "With --finance-year: refunds in refunds_seen across the year.") var financeRefunds = 20_000

    // The job's own process (internal).
    @Option(help: .hidden) var childJob: String?
    @Option(help: .hidden) var clientRevenuecatRps = 0.0
    @Option(help: .hidden) var clientAppStoreRps = 0.0
    @Option(help: .hidden) var asOfEpoch = 0.0
    @Option(help: .hidden) var reportDir = ""
    @Option(help: .hidden) var limit: Int?
    @Option(help: .hidden) var shard: String?

    func run() async throws {
        if let childJob {
            let settings = BenchJob.Settings(
                concurrency: concurrency, revenueCatRPS: clientRevenuecatRps, appStoreRPS: clientAppStoreRps, limit: limit,
                asOf: Date(timeIntervalSince1970: asOfEpoch), shard: shard)
            try await BenchJob.runChild(settings, reportDirectory: URL(fileURLWithPath: reportDir), resultPath: childJob)
            return
        }
        var logger = Logger(label: "subrecon-bench")
        logger.logLevel = .warning
        let candidateCount = min(candidates ?? users, users)
        guard candidateCount > 0 else { throw ValidationError("--candidates must be at least 1") }
        let stride = max(1, users / candidateCount)
        let asOf = Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down))
        let database = try await BenchDatabase.open(logger: logger)
        do {
            if financeYear {
                let shape = FinanceBench.Shape(
                    nights: financeNights, verdicts: financeVerdicts, applied: financeApplied, atRisk: financeAtRisk,
                    refunds: financeRefunds)
                try await FinanceBench.run(database: database, shape: shape, logger: logger)
            } else if scanOnly {
                try await ScanBench.run(
                    database: database, users: users, stride: stride, asOf: asOf, pageSize: pageSize, sweepDays: sweepDays,
                    logger: logger)
            } else {
                try await measureJob(database: database, stride: stride, asOf: asOf, logger: logger)
            }
            await database.close(logger: logger)
        } catch {
            await database.close(logger: logger)
            throw error
        }
    }

    private func measureJob(database: BenchDatabase, stride: Int, asOf: Date, logger: Logger) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("subrecon-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let all = BenchCandidate.all(users: users, stride: stride)
        let withApple = !noAppStore
        say("seeding \(users) users (\(all.count) candidates, \(withApple ? "half" : "none") App Store) ...")
        try await database.seedUsers(users: users, stride: stride, asOf: asOf, logger: logger)
        let simulator = try await BenchSimulator.start(
            candidates: all, asOf: asOf, latency: .milliseconds(latencyMs), rateLimit: rateLimit, withApple: withApple,
            directory: directory)
        var environment = simulator.environment
        environment["DATABASE_URL"] = database.url
        say(
            "simulator: latency \(latencyMs) ms, limit \(rateLimit > 0 ? "\(rateLimit) req/s per source" : "none"); "
                + "job: --revenuecat-rps \(rateLimit) --app-store-rps \(rateLimit)")

        var rows: [BenchRow] = []
        let settings = BenchJob.Settings(
            concurrency: concurrency, revenueCatRPS: rateLimit, appStoreRPS: rateLimit, limit: nil, asOf: asOf)
        if shards > 0 {
            rows.append(
                try await measureShards(
                    settings, label: "\(shards) shards", database: database, simulator: simulator, environment: environment,
                    candidates: all, asOf: asOf, stride: stride, directory: directory, logger: logger))
            if overBudget {
                var whole = settings
                whole.revenueCatRPS = rateLimit * Double(shards)
                whole.appStoreRPS = rateLimit * Double(shards)
                rows.append(
                    try await measureShards(
                        whole, label: "\(shards) shards × whole budget", database: database, simulator: simulator,
                        environment: environment, candidates: all, asOf: asOf, stride: stride, directory: directory, logger: logger))
            }
            await simulator.server.shutdown()
            print(BenchRow.table(rows))
            return
        }
        _ = await simulator.observe(candidates: all[...], withApple: withApple)
        let concurrent = try await BenchJob.measure(settings, environment: environment, directory: directory)
        let seen = await simulator.observe(candidates: all[...], withApple: withApple)
        rows.append(BenchRow(label: "concurrency \(concurrency)", job: concurrent, simulator: seen, rateLimit: rateLimit))

        if sequentialUsers > 0 {
            let count = min(sequentialUsers, all.count)
            try await database.seedUsers(users: users, stride: stride, asOf: asOf, logger: logger)
            var sequential = settings
            sequential.concurrency = 1
            sequential.limit = count
            let job = try await BenchJob.measure(sequential, environment: environment, directory: directory)
            let seenSequential = await simulator.observe(candidates: all[..<count], withApple: withApple)
            rows.append(BenchRow(label: "sequential", job: job, simulator: seenSequential, rateLimit: rateLimit))
        }
        await simulator.server.shutdown()
        print(BenchRow.table(rows))
    }
}

extension SubreconBench {
    /// `shards` job processes at once, `--shard 0/N` ... `N-1/N`, each with `settings`' rates as its `--*-rps`.
    fileprivate func measureShards(
        _ settings: BenchJob.Settings, label: String, database: BenchDatabase, simulator: BenchSimulator,
        environment: [String: String], candidates all: [BenchCandidate], asOf: Date, stride: Int, directory: URL, logger: Logger
    ) async throws -> BenchRow {
        try await database.seedUsers(users: users, stride: stride, asOf: asOf, logger: logger)
        _ = await simulator.observe(candidates: all[...], withApple: !noAppStore)
        say("\(label): \(shards) processes, --revenuecat-rps \(settings.revenueCatRPS) --app-store-rps \(settings.appStoreRPS) each ...")
        let count = shards
        let parts = try await withThrowingTaskGroup(of: JobMeasurement.self) { group in
            for index in 0..<count {
                var shard = settings
                shard.shard = "\(index)/\(count)"
                group.addTask { try await BenchJob.measure(shard, environment: environment, directory: directory) }
            }
            var parts: [JobMeasurement] = []
            for try await part in group { parts.append(part) }
            return parts
        }
        let seen = await simulator.observe(candidates: all[...], withApple: !noAppStore)
        return BenchRow(label: label, job: .combined(parts), simulator: seen, rateLimit: rateLimit)
    }
}

func say(_ line: String) {
    FileHandle.standardError.write(Data((line + "\n").utf8))
}
