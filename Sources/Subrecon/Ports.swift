import Foundation
import SubreconCore
import SubreconStore

/// The database as the job needs it. Production: PostgreSQL (`SubscriptionStore`).
public protocol ReconcileDatabase: Sendable {
    func loadCatalog() async throws -> ProductCatalog
    func countCandidates(_ query: CandidateQuery) async throws -> Int
    func candidatePage(_ query: CandidateQuery, after lastID: String?, limit: Int) async throws -> [UserRow]
    /// Applies verdicts; one compare-and-set per row, each atomic with its audit row and intents.
    func applyDetailed(_ verdicts: [Verdict], runID: String) async throws -> [AppliedVerdict]
    func startRun(_ record: RunRecord) async throws
    func finishRun(id: String, status: RunStatus, summary: Data, finishedAt: Date) async throws
}

extension SubscriptionStore: ReconcileDatabase {}

/// The sources of truth as the job needs them: everything known about one user.
public protocol FactSource: Sendable {
    func facts(for row: UserRow) async -> SourceFacts
}
