import Foundation
import SubreconCore
import SubreconDatabase

// The job's ports: small protocols it owns, one per thing it needs from the outside, passed in explicitly.
// Production: PostgreSQL (`SubscriptionDatabase`) for the database ones, `StoreFactSource` for the sources.

/// The candidates of a run, in id order (SPEC 5.1).
public protocol CandidateSource: Sendable {
    func countCandidates(_ query: CandidateQuery) async throws -> Int
    func candidatePage(_ query: CandidateQuery, after lastID: String?, limit: Int) async throws -> [UserRow]
}

/// The product → tier mapping.
public protocol CatalogSource: Sendable {
    func loadCatalog() async throws -> ProductCatalog
}

/// The run's own record (`reconcile_runs`): started, resumed, finished, failed, and the selection `--resume` reuses.
public protocol RunJournal: Sendable {
    func startRun(_ record: RunRecord) async throws
    func finishRun(id: String, status: RunStatus, summary: Data, finishedAt: Date) async throws
    func setRunStatus(id: String, _ status: RunStatus) async throws
    func recordSelection(runID: String, selection: Data) async throws
    func storedRun(id: String) async throws -> StoredRun?
}

/// The run's verdicts and what applying them did (`reconcile_verdicts`), and the write of a verdict itself.
public protocol VerdictRecords: Sendable {
    func appendVerdicts(runID: String, _ verdicts: [Verdict], seqs: [Int64], progress: RunProgress) async throws
    func ledgerTail(runID: String, afterUser: String?) async throws -> LedgerTail
    func ledgerPage(runID: String, afterSeq: Int64, limit: Int) async throws -> [LedgerEntry]
    /// Applies verdicts; one compare-and-set per row, each atomic with its audit row, intents and (with `ledger`)
    /// its outcome in the run's ledger.
    func applyDetailed(_ verdicts: [Verdict], runID: String, ledger: Bool) async throws -> [AppliedVerdict]
    func markUnchanged(runID: String, seqs: [Int64]) async throws
}

/// Past runs with their stored summaries (the HTML chart, the last-success metric).
public protocol RunHistory: Sendable {
    func recentRunSummaries(shard: ShardSpec?, limit: Int) async throws -> [RunHistoryEntry]
}

/// Everything the job asks of its database, as one value; each phase takes only the port it needs.
public typealias ReconcileDatabase = CandidateSource & CatalogSource & RunJournal & VerdictRecords & RunHistory

/// The job's database ports, one per role, so a caller (or a test) can replace one without forwarding the rest.
public struct JobPorts: Sendable {
    public var candidates: any CandidateSource
    public var catalog: any CatalogSource
    public var journal: any RunJournal
    public var verdicts: any VerdictRecords
    /// nil: the charts show this run only.
    public var history: (any RunHistory)?

    public init(
        candidates: any CandidateSource, catalog: any CatalogSource, journal: any RunJournal, verdicts: any VerdictRecords,
        history: (any RunHistory)?
    ) {
        self.candidates = candidates
        self.catalog = catalog
        self.journal = journal
        self.verdicts = verdicts
        self.history = history
    }

    /// Every port served by one database.
    public init(_ database: any ReconcileDatabase) {
        self.init(candidates: database, catalog: database, journal: database, verdicts: database, history: database)
    }
}

extension SubscriptionDatabase: CandidateSource, CatalogSource, RunJournal, VerdictRecords, RunHistory {}

/// The sources of truth as the job needs them: everything known about one user.
public protocol FactSource: Sendable {
    func facts(for row: UserRow) async -> SourceFacts
}

/// Where legacy App Store receipts are kept (`apple_receipts`), and which rows hold which Apple original
/// transaction id. Production: `SubscriptionDatabase`.
public protocol ReceiptLookup: Sendable {
    /// The stored base64 receipt of `userID`, or nil.
    func receipt(for userID: String) async throws -> String?
    /// Users other than `userID` whose row already holds `originalTransactionID`.
    func otherUsers(holdingOriginalTransactionID originalTransactionID: String, besides userID: String) async throws -> [String]
}

extension SubscriptionDatabase: ReceiptLookup {}
