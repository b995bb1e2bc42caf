import Foundation
import SubreconCore
import SubreconStore

/// The database as the job needs it. Production: PostgreSQL (`SubscriptionStore`).
public protocol ReconcileDatabase: Sendable {
    func loadCatalog() async throws -> ProductCatalog
    func countCandidates(_ query: CandidateQuery) async throws -> Int
    func candidatePage(_ query: CandidateQuery, after lastID: String?, limit: Int) async throws -> [UserRow]
    /// Applies verdicts; one compare-and-set per row, each atomic with its audit row, intents and (with `ledger`)
    /// its outcome in the run's ledger.
    func applyDetailed(_ verdicts: [Verdict], runID: String, ledger: Bool) async throws -> [AppliedVerdict]
    func startRun(_ record: RunRecord) async throws
    func finishRun(id: String, status: RunStatus, summary: Data, finishedAt: Date) async throws
    func setRunStatus(id: String, _ status: RunStatus) async throws
    func recordSelection(runID: String, selection: Data) async throws
    func appendVerdicts(runID: String, _ verdicts: [Verdict], progress: RunProgress) async throws
    func ledgerPage(runID: String, afterSeq: Int64, limit: Int) async throws -> [LedgerEntry]
    func markUnchanged(runID: String, seqs: [Int64]) async throws
    func storedRun(id: String) async throws -> StoredRun?
}

extension SubscriptionStore: ReconcileDatabase {}

/// The sources of truth as the job needs them: everything known about one user.
public protocol FactSource: Sendable {
    func facts(for row: UserRow) async -> SourceFacts
}

/// Where legacy App Store receipts are kept (`apple_receipts`), and which rows hold which Apple original
/// transaction id. Production: `SubscriptionStore`.
public protocol ReceiptStore: Sendable {
    /// The stored base64 receipt of `userID`, or nil.
    func receipt(for userID: String) async throws -> String?
    /// Users other than `userID` whose row already holds `originalTransactionID`.
    func otherUsers(holdingOriginalTransactionID originalTransactionID: String, besides userID: String) async throws -> [String]
}

extension SubscriptionStore: ReceiptStore {}
