import AsyncHTTPClient
import Foundation
import Logging
import PostgresNIO
import SubreconCore
import SubreconReports
import SubreconStore

/// The commands behind the executable, usable from the demo and tests with an explicit environment.
public enum Commands {
    /// `subrecon migrate`.
    public static func migrate(environment env: Environment, logger: Logger) async throws -> ExitStatus {
        let config = try SubreconConfiguration.load(env, requireRevenueCat: false)
        try await withStore(config.database, logger: logger, requireSchema: false) { store in
            let applied = try await store.migrate()
            logger.info(
                "schema migrated",
                metadata: ["schema.applied": "\(applied.isEmpty ? "none (up to date)" : applied.map(String.init).joined(separator: ","))"])
        }
        return .ok
    }

    public static func loadProducts(environment env: Environment, logger: Logger) async throws -> ProductCatalog {
        let config = try SubreconConfiguration.load(env, requireRevenueCat: false)
        return try await withStore(config.database, logger: logger) { try await $0.loadCatalog() }
    }

    public static func importProducts(_ entries: [ProductCatalog.Entry], environment env: Environment, logger: Logger) async throws {
        let config = try SubreconConfiguration.load(env, requireRevenueCat: false)
        try await withStore(config.database, logger: logger) { try await $0.upsertProducts(entries) }
    }

    /// `subrecon run`: configuration (78), database reachable (69), schema present, shard lock (4), the job.
    public static func run(
        environment env: Environment, options: RunOptions, logger: Logger,
        progress: (@Sendable (ProgressSnapshot) -> Void)? = nil
    ) async throws -> RunResult {
        let config = try SubreconConfiguration.load(env, requireRevenueCat: true)
        var adjusted = options
        adjusted.environment = config.environment
        let options = adjusted
        let startedAt = Date()
        let runID = ReconcileJob.makeRunID(startedAt: startedAt, shard: options.shard)
        return try await withStore(config.database, logger: logger) { store in
            let stats = RequestStats()
            return try await HTTPClient.withHTTPClient(configuration: httpConfiguration(concurrency: options.concurrency)) { http in
                let appStoreRate =
                    options.appStoreRequestsPerSecond ?? RunOptions.defaultAppStoreRequestsPerSecond(config.environment)
                let source = try StoreFactSource(
                    configuration: config, httpClient: http, stats: stats, logger: logger,
                    revenueCatGate: SharedRateLimiter<ContinuousClock>.perSecond(options.revenueCatRequestsPerSecond),
                    appStoreGate: SharedRateLimiter<ContinuousClock>.perSecond(appStoreRate))
                let job = ReconcileJob(
                    database: store, source: source, stats: stats,
                    sourcesNote: source.notes, logger: logger, progress: progress)
                guard
                    let result = try await store.withShardLock(shard: options.shard, {
                        try await job.run(options, runID: runID, startedAt: startedAt)
                    })
                else {
                    throw CommandFailure(.shardLocked, "another run holds the lock of shard \(options.shard); nothing done")
                }
                return result
            }
        }
    }

    static func httpConfiguration(concurrency: Int) -> HTTPClient.Configuration {
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: max(8, concurrency * 2))
        configuration.timeout = .init(connect: .seconds(10), read: .seconds(30))
        return configuration
    }

    /// Opens a PostgreSQL client for the duration of `body`; an unreachable server is exit 69, a missing schema 78.
    static func withStore<T: Sendable>(
        _ settings: DatabaseSettings, logger: Logger, requireSchema: Bool = true,
        _ body: @Sendable (SubscriptionStore) async throws -> T
    ) async throws -> T {
        do {
            try await SubscriptionStore.checkReachable(settings, logger: logger)
        } catch {
            throw CommandFailure(.unavailable, error.description)
        }
        let client = PostgresClient(configuration: settings.clientConfiguration(), backgroundLogger: logger)
        return try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask {
                await client.run()
                return nil
            }
            await Task.yield()
            defer { group.cancelAll() }
            let store = SubscriptionStore(client: client, logger: logger)
            do {
                if requireSchema { try await store.requireSchema() }
                return try await body(store)
            } catch let error as StoreError {
                switch error {
                case .schemaMissing, .schemaOutdated: throw CommandFailure(.config, error.description)
                case .unreachable: throw CommandFailure(.unavailable, error.description)
                default: throw error
                }
            }
        }
    }
}
