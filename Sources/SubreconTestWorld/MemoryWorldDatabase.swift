import Foundation
import Logging
import SubreconApp
import SubreconCore
import SubreconJob
import SubreconPorts
import SubreconTestKit

/// A world's database in memory: `InMemoryDatabase` serving every port, the job composed by `Commands.withJob` with
/// the real store adapters the environment configures (no PostgreSQL session, preflight or shard lock: those are
/// what the PostgreSQL backend's tests show).
public struct MemoryWorldDatabase: WorldDatabase {
    public let database: InMemoryDatabase
    public var backend: WorldBackend { .memory }

    public init(products: [ProductCatalog.Entry]) {
        database = InMemoryDatabase(catalog: ProductCatalog(products))
    }

    public func insertUsers(_ rows: [UserRow]) async throws { database.insert(rows) }
    public func user(_ id: String) async throws -> UserRow? { database.user(id) }

    public func poison(_ id: String) async throws {
        database.webhookWrite(id) { $0.rowError = "updated_at is -infinity" }
    }
    public func upsertProducts(_ entries: [ProductCatalog.Entry]) async throws { database.upsertProducts(entries) }
    public func saveReceipt(_ receipt: String, for userID: String) async throws { database.saveReceipt(receipt, for: userID) }
    public func webhookWrite(_ id: String, tier: Int, status: String) async throws {
        database.webhookWrite(id) {
            $0.currentTier = tier
            $0.statusText = status
        }
    }

    public func count(_ tally: WorldTally) async throws -> Int {
        switch tally {
        case .audits(let user): return user.map { database.audits(of: $0).count } ?? database.audits.count
        case .intents(let user): return user.map { database.intents(of: $0).count } ?? database.intents.count
        case .intentsOfKind(let user, let kind): return database.intents(of: user).count { $0.intent.kind == kind }
        case .refundsSeen(let store, let transaction):
            return database.keptRefunds.count {
                ($0.store == store || store == nil) && ($0.transactionID == transaction || transaction == nil)
            }
        case .runs(let status): return database.runStatuses.count { status == nil || $0 == status }
        case .usersAtTier(let tier): return database.users.count { $0.currentTier == tier }
        case .verdicts(let runID): return database.ledger(runID: runID).count
        case .keptOrphans(let identifier): return database.keptOrphans.count { $0.identifier == identifier }
        case .originalTransactionChanges(let user, let from, let to):
            return database.audits(of: user).count {
                (from == nil || $0.before.originalTransactionID == from) && $0.after.originalTransactionID == to
            }
        }
    }

    public func keptRefunds() async throws -> [WorldRefund] {
        database.keptRefundsByUser.map { user, refund in
            WorldRefund(
                userID: user, store: refund.store, transactionID: refund.transactionID, refundedAt: refund.refundedAt,
                amount: refund.amount.map { "\($0)" }, currency: refund.currency)
        }
    }

    public func run(environment: ProcessEnvironment, options: RunOptions, logger: Logger, resume: String?) async throws -> RunResult {
        let config = try SubreconConfiguration.load(environment, requireSource: true)
        var requested = options
        requested.environment = config.environment
        let now = Date()
        let start = try await Commands.RunStart.resolve(
            requested, runID: ReconcileJob.makeRunID(startedAt: now, shard: requested.shard), resuming: resume, journal: database, now: now)
        let ports = JobPorts(database)
        return try await Commands.withJob(
            config: config, options: start.options, ports: ports, reads: AdapterReads(database), logger: logger
        ) { job in
            try await job.run(start.options, runID: start.runID, startedAt: start.startedAt, resume: start.progress)
        }
    }
}
