import Foundation
import Logging
import SubreconCore
import SubreconJob
import SubreconPorts
import Testing

/// Which database a job world keeps its rows in: the job's ports in memory (the unit lane) or a real PostgreSQL
/// schema (the full run, where `SUBRECON_TEST_DATABASE_URL` names a server).
public enum WorldBackend: String, Sendable, CaseIterable, CustomTestStringConvertible {
    case memory
    case postgres

    public var testDescription: String { rawValue }
}

/// What a job test counts in a world's database, whichever backend keeps it.
public enum WorldTally: Sendable, Hashable {
    /// Audit rows (`reconcile_changes`), of one user or of everybody.
    case audits(user: String?)
    /// Queued push intents (`push_intents`), of one user or of everybody.
    case intents(user: String?)
    /// Queued push intents of `user` of one kind (their payload's `action` is the kind's `appAction`).
    case intentsOfKind(user: String, PushIntentKind)
    /// Refunds kept (`refunds_seen`), optionally of one store and transaction.
    case refundsSeen(store: String?, transaction: String?)
    /// Runs recorded (`reconcile_runs`), optionally with one status.
    case runs(RunStatus?)
    /// Rows of `users` at `tier`.
    case usersAtTier(Int)
    /// Verdicts kept in one run's ledger (`reconcile_verdicts`).
    case verdicts(runID: String)
    /// Orphans kept across nights (`reconcile_orphans`) under one store identifier.
    case keptOrphans(identifier: String)
    /// Audit rows of `user` whose Apple original transaction id was `from` before (any, when nil) and `to` after.
    case originalTransactionChanges(user: String, from: String?, to: String)
}

/// One row of `refunds_seen`, as a job test reads it back.
public struct WorldRefund: Sendable, Hashable {
    public var userID: String
    public var store: String
    public var transactionID: String
    public var refundedAt: Date
    /// The amount as the database keeps it (decimal text), nil when the source stated none.
    public var amount: String?
    public var currency: String?

    public init(userID: String, store: String, transactionID: String, refundedAt: Date, amount: String?, currency: String?) {
        self.userID = userID
        self.store = store
        self.transactionID = transactionID
        self.refundedAt = refundedAt
        self.amount = amount
        self.currency = currency
    }
}

/// The database a job world runs the job over, as a job test sees it: seed rows, products and receipts, read rows
/// and counts back, and run the job as `subrecon run` composes it.
public protocol WorldDatabase: Sendable {
    var backend: WorldBackend { get }
    /// Inserts `rows` with every column they carry, the app's identifier columns (`account_token`, the stores') too.
    func insertUsers(_ rows: [UserRow]) async throws
    func user(_ id: String) async throws -> UserRow?
    /// Makes `id`'s row one the job cannot read (PostgreSQL: `updated_at` of `-infinity`; in memory: `rowError` set).
    func poison(_ id: String) async throws
    func upsertProducts(_ entries: [ProductCatalog.Entry]) async throws
    func saveReceipt(_ receipt: String, for userID: String) async throws
    /// Another writer (the app's webhook) sets `id`'s tier and status between runs: `updated_at` moves on.
    func webhookWrite(_ id: String, tier: Int, status: String) async throws
    func count(_ tally: WorldTally) async throws -> Int
    /// Every refund kept (`refunds_seen`), in no particular order.
    func keptRefunds() async throws -> [WorldRefund]
    /// The job over this database with the sources `environment` configures, as `subrecon run` runs it; with
    /// `resume`, that stored run continued (`--resume` / `--accept-downgrades`).
    func run(environment: ProcessEnvironment, options: RunOptions, logger: Logger, resume: String?) async throws -> RunResult
}

extension WorldDatabase {
    /// A new run (not a resumed one).
    public func run(environment: ProcessEnvironment, options: RunOptions, logger: Logger) async throws -> RunResult {
        try await run(environment: environment, options: options, logger: logger, resume: nil)
    }
}
