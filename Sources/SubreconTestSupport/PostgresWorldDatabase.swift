import Foundation
import Logging
import PostgresNIO
import StoreSimulator
import SubreconApp
import SubreconCore
import SubreconDatabase
import SubreconJob
import SubreconPorts
import SubreconTestKit
import SubreconTestWorld

/// A world's database in a throwaway PostgreSQL schema, the job run through `Commands.run` exactly as `subrecon run`
/// runs it (its configuration, preflight, users check and shard lock included).
public struct PostgresWorldDatabase: WorldDatabase {
    public let schema: TestSchema
    public var backend: WorldBackend { .postgres }

    public init(schema: TestSchema) { self.schema = schema }

    public func insertUsers(_ rows: [UserRow]) async throws {
        try await schema.db.insertUsers(rows)
        for row in rows {
            guard let token = row.accountToken else { continue }
            try await schema.client.query("update users set account_token = \(token) where id = \(row.id)")
        }
    }

    public func user(_ id: String) async throws -> UserRow? { try await schema.db.user(id: id) }

    public func poison(_ id: String) async throws {
        try await schema.client.query("update users set updated_at = '-infinity' where id = \(id)")
    }
    public func upsertProducts(_ entries: [ProductCatalog.Entry]) async throws { try await schema.db.catalog.upsertProducts(entries) }
    public func saveReceipt(_ receipt: String, for userID: String) async throws {
        try await schema.db.receipts.saveReceipt(receipt, for: userID)
    }

    public func webhookWrite(_ id: String, tier: Int, status: String) async throws {
        try await schema.client.query(
            "update users set current_tier = \(tier), subscription_status = \(status), updated_at = now() where id = \(id)")
    }

    public func count(_ tally: WorldTally) async throws -> Int {
        let query: PostgresQuery =
            switch tally {
            case .audits(let user?): "select count(*)::int from reconcile_changes where user_id = \(user)"
            case .audits(nil): "select count(*)::int from reconcile_changes"
            case .intents(let user?): "select count(*)::int from push_intents where user_id = \(user)"
            case .intents(nil): "select count(*)::int from push_intents"
            case .intentsOfKind(let user, let kind):
                """
                select count(*)::int from push_intents where user_id = \(user) and payload->>'kind' = \(kind.rawValue) \
                and payload->>'action' is not distinct from \(kind.appAction)
                """
            case .refundsSeen(let store, let transaction):
                """
                select count(*)::int from refunds_seen
                where (\(store)::text is null or store = \(store)) and (\(transaction)::text is null or transaction_id = \(transaction))
                """
            case .runs(let status?): "select count(*)::int from reconcile_runs where status = \(status.rawValue)"
            case .runs(nil): "select count(*)::int from reconcile_runs"
            case .usersAtTier(let tier): "select count(*)::int from users where current_tier = \(tier)"
            case .verdicts(let runID): "select count(*)::int from reconcile_verdicts where run_id = \(runID)"
            case .keptOrphans(let identifier): "select count(*)::int from reconcile_orphans where identifier = \(identifier)"
            case .originalTransactionChanges(let user, let from, let to):
                """
                select count(*)::int from reconcile_changes where user_id = \(user)
                and (\(from)::text is null or before->>'iap_original_transaction_id' = \(from)) and after->>'iap_original_transaction_id' = \(to)
                """
            }
        for try await value in try await schema.client.query(query).decode(Int.self) { return value }
        return 0
    }

    public func keptRefunds() async throws -> [WorldRefund] {
        let rows = try await schema.client.query(
            "select user_id, store, transaction_id, refunded_at, amount, currency from refunds_seen")
        var kept: [WorldRefund] = []
        for try await (user, store, transaction, at, amount, currency) in rows.decode((String, String, String, Date, String?, String?).self)
        {
            kept.append(
                WorldRefund(userID: user, store: store, transactionID: transaction, refundedAt: at, amount: amount, currency: currency))
        }
        return kept
    }

    public func run(environment: ProcessEnvironment, options: RunOptions, logger: Logger, resume: String?) async throws -> RunResult {
        try await Commands.run(environment: environment, options: options, logger: logger, resume: resume)
    }
}

extension JobWorld {
    /// The backends a job test runs in here: in memory always, PostgreSQL too when the test database is configured
    /// (`scripts/test` starts one; `scripts/test --unit` does not).
    public static var backends: [WorldBackend] { TestDatabase.isEnabled ? [.memory, .postgres] : [.memory] }

    /// `body` in a fresh world of `backend` holding `products`: in memory, or in a fresh migrated PostgreSQL schema
    /// (dropped afterwards). The other parameters are `JobWorld.with`'s.
    public static func with(
        _ backend: WorldBackend, apple: Bool = false, receipts: Bool = false, revenueCat: Bool = true,
        routes: [any SimulatorRoute] = [], extra: [String: String] = [:], _ body: (JobWorld) async throws -> Void
    ) async throws {
        switch backend {
        case .memory:
            try await with(
                MemoryWorldDatabase(products: products), databaseURL: "postgres://world@127.0.0.1:9/memory?sslmode=disable",
                apple: apple, receipts: receipts, revenueCat: revenueCat, routes: routes, extra: extra, body)
        case .postgres:
            try await TestDatabase.withSchema(prefix: "w_") { schema in
                try await schema.db.migrate()
                try await schema.db.catalog.upsertProducts(products)
                try await with(
                    PostgresWorldDatabase(schema: schema), databaseURL: schema.databaseURL, apple: apple, receipts: receipts,
                    revenueCat: revenueCat, routes: routes, extra: extra, body)
            }
        }
    }
}
