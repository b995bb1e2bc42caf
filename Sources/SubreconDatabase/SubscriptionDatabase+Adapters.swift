import Foundation
import Logging
import PostgresNIO
import SubreconCore
import SubreconPorts

// PostgreSQL serves each port of the job and of the store adapters with one small adapter over the database's shared
// session pool (docs/ARCHITECTURE.md, "Ports"). The composition root passes each adapter to the port it serves; no
// port is found by a cast.

/// One port's adapter: the database whose session pool, logger and `users` relation it shares.
protocol DatabaseAdapter: Sendable {
    var database: SubscriptionDatabase { get }
}

extension DatabaseAdapter {
    var session: SessionPool { database.session }
    var logger: Logger { database.logger }
    var users: UsersRelation { database.users }

    /// Runs `body`, mapping any error to a `DatabaseError` for `operation`.
    @discardableResult
    func run<T>(_ operation: String, _ body: () async throws -> T) async throws -> T {
        try await database.run(operation, body)
    }

    /// The distinct identifiers among `identifiers` a row can hold, sorted: an empty or whitespace-only one names no
    /// purchase (a row holding it holds none, `UserRow.storedIdentifier`), so it is never looked up, matched or held.
    static func held(_ identifiers: [String]) -> [String] {
        Array(Set(identifiers.compactMap(UserRow.storedIdentifier))).sorted()
    }

    /// A decimal in plain notation (`9.99`), exactly as held.
    static func decimalText(_ value: Decimal) -> String {
        var value = value
        return NSDecimalString(&value, Locale(identifier: "en_US_POSIX"))
    }

    /// A kept amount (`amount::text`) as a number; nil for none or one that does not read.
    static func decimal(_ text: String?) -> Decimal? {
        text.flatMap { Decimal(string: $0, locale: Locale(identifier: "en_US_POSIX")) }
    }

    /// `value` as the text of a jsonb value, its keys sorted.
    static func json(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return SourceText.jsonbText(try encoder.encode(value))
    }

    /// The typed status of a `reconcile_runs.status` text; an unknown one is an error naming it, never a guess (a
    /// run read as `failed` could be resumed, and a period's figures would leave it out in silence).
    static func runStatus(_ text: String) throws -> RunStatus {
        guard let status = RunStatus(rawValue: text) else {
            throw DatabaseError.database(
                operation: "read runs", reason: "unknown run status \(SourceText.sanitized(String(text.prefix(40))))")
        }
        return status
    }

    /// The typed mode of a `reconcile_runs.mode` text; an unknown one is an error naming it, never a guess.
    static func runMode(_ text: String) throws -> CandidateQuery.Mode {
        guard let mode = CandidateQuery.Mode(rawValue: text) else {
            throw DatabaseError.database(
                operation: "read runs", reason: "unknown run mode \(SourceText.sanitized(String(text.prefix(40))))")
        }
        return mode
    }

    /// The typed outcome of a `reconcile_verdicts.outcome` text; an unknown one is an error, never a guess.
    static func ledgerOutcome(_ text: String) throws -> LedgerOutcome {
        guard let outcome = LedgerOutcome(rawValue: text) else {
            throw DatabaseError.database(operation: "read verdicts", reason: "unknown outcome \(text.prefix(40))")
        }
        return outcome
    }
}

/// PostgreSQL's adapter for the candidates of a run and rows read by id (`users`).
public struct PostgresCandidates: DatabaseAdapter, CandidateSource {
    let database: SubscriptionDatabase
}

/// PostgreSQL's adapter for the product → tier mapping (`product_tiers`).
public struct PostgresCatalog: DatabaseAdapter, CatalogSource {
    let database: SubscriptionDatabase
}

/// PostgreSQL's adapter for the run's own record (`reconcile_runs`).
public struct PostgresRunJournal: DatabaseAdapter, RunJournal {
    let database: SubscriptionDatabase
}

/// PostgreSQL's adapter for past runs with their stored summaries (`reconcile_runs`).
public struct PostgresRunHistory: DatabaseAdapter, RunHistory {
    let database: SubscriptionDatabase
}

/// PostgreSQL's adapter for the run's ledger and the writes of its verdicts (`reconcile_verdicts`, `users`, the audit and intent tables).
public struct PostgresVerdictRecords: DatabaseAdapter, VerdictRecords {
    let database: SubscriptionDatabase
}

/// PostgreSQL's adapter for users named by store feeds, the sweep and the feeds' windows (`reconcile_run_candidates`, `reconcile_feed_windows`).
public struct PostgresFeedCandidates: DatabaseAdapter, FeedCandidates {
    let database: SubscriptionDatabase
}

/// PostgreSQL's adapter for linking and orphans (`reconcile_run_candidates`, `reconcile_orphans`).
public struct PostgresPurchaseLinks: DatabaseAdapter, PurchaseLinks {
    let database: SubscriptionDatabase
}

/// PostgreSQL's adapter for the refunds seen across runs (`refunds_seen`).
public struct PostgresRefundRecords: DatabaseAdapter, RefundRecords, RefundsSeenLookup {
    let database: SubscriptionDatabase
}

/// PostgreSQL's adapter for the report inputs a run keeps (`reconcile_run_reports`).
public struct PostgresRunReports: DatabaseAdapter, RunReportRecords {
    let database: SubscriptionDatabase
}

/// PostgreSQL's adapter for stored App Store receipts and who holds an original transaction (`apple_receipts`, `users`).
public struct PostgresReceipts: DatabaseAdapter, ReceiptLookup {
    let database: SubscriptionDatabase
}

/// PostgreSQL's adapter for the RevenueCat customers known to exist (`revenuecat_known_customers`).
public struct PostgresKnownCustomers: DatabaseAdapter, KnownRevenueCatCustomers {
    let database: SubscriptionDatabase
}

/// PostgreSQL's adapter for the runs, changes, stocks and refunds of a finance period.
public struct PostgresFinancePeriod: DatabaseAdapter, FinancePeriodSource {
    let database: SubscriptionDatabase
}

/// Each port's adapter over this database's session pool.
extension SubscriptionDatabase {
    public var candidates: PostgresCandidates { PostgresCandidates(database: self) }
    public var catalog: PostgresCatalog { PostgresCatalog(database: self) }
    public var runs: PostgresRunJournal { PostgresRunJournal(database: self) }
    public var history: PostgresRunHistory { PostgresRunHistory(database: self) }
    public var verdicts: PostgresVerdictRecords { PostgresVerdictRecords(database: self) }
    public var feeds: PostgresFeedCandidates { PostgresFeedCandidates(database: self) }
    public var links: PostgresPurchaseLinks { PostgresPurchaseLinks(database: self) }
    public var refunds: PostgresRefundRecords { PostgresRefundRecords(database: self) }
    public var reports: PostgresRunReports { PostgresRunReports(database: self) }
    public var receipts: PostgresReceipts { PostgresReceipts(database: self) }
    public var knownCustomers: PostgresKnownCustomers { PostgresKnownCustomers(database: self) }
    public var finance: PostgresFinancePeriod { PostgresFinancePeriod(database: self) }
}
