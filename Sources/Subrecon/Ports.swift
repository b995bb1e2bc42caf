import Foundation
import SubreconCore

/// Which users a run looks at (SPEC 5.1 and `--mode backfill`).
public enum RunMode: String, Sendable, Codable, CaseIterable {
    case nightly
    case backfill
}

/// `--shard I/N`.
public struct Shard: Sendable, Hashable, CustomStringConvertible {
    public var index: Int
    public var count: Int
    public init(index: Int, count: Int) {
        self.index = index
        self.count = count
    }
    public static let all = Shard(index: 0, count: 1)
    public var description: String { "\(index)/\(count)" }

    /// Parses `I/N` with 0 <= I < N.
    public init?(parsing text: String) {
        let parts = text.split(separator: "/")
        guard parts.count == 2, let i = Int(parts[0]), let n = Int(parts[1]), n >= 1, i >= 0, i < n else { return nil }
        self.init(index: i, count: n)
    }
}

/// The candidate selection a run asks the database for.
public struct CandidateSelection: Sendable, Hashable {
    public var mode: RunMode
    public var asOf: Date
    public var lookbackDays: Int
    public var userIDs: [String]?
    public var endAfter: Date?
    public var endBefore: Date?
    public var shard: Shard

    public init(
        mode: RunMode, asOf: Date, lookbackDays: Int, userIDs: [String]? = nil, endAfter: Date? = nil,
        endBefore: Date? = nil, shard: Shard = .all
    ) {
        self.mode = mode
        self.asOf = asOf
        self.lookbackDays = lookbackDays
        self.userIDs = userIDs
        self.endAfter = endAfter
        self.endBefore = endBefore
        self.shard = shard
    }
}

/// What writing one verdict did.
public enum ApplyResult: Sendable, Hashable {
    /// Row, audit and the new intents were committed; `queued` are the intents not already in the outbox.
    case applied(queued: [PushIntent])
    /// The row changed since it was read (a webhook won); nothing was written.
    case concurrentUpdate
    /// The row is gone.
    case notFound
}

/// The record of one run in `reconcile_runs`.
public struct RunRecord: Sendable {
    public var id: String
    public var mode: RunMode
    public var asOf: Date
    public var shard: Shard
    public var dryRun: Bool
    public var startedAt: Date
    public var options: [String: String]
}

/// The database as the job needs it. Production: PostgreSQL (`SubreconStore`).
public protocol ReconcileDatabase: Sendable {
    func loadCatalog() async throws -> ProductCatalog
    func countCandidates(_ selection: CandidateSelection) async throws -> Int
    func candidatePage(_ selection: CandidateSelection, after lastID: String?, limit: Int) async throws -> [UserRow]
    /// Applies verdicts that change rows; one compare-and-set per row, each atomic with its audit row and intents.
    func apply(_ verdicts: [Verdict], runID: String) async throws -> [ApplyResult]
    func startRun(_ record: RunRecord) async throws
    func finishRun(id: String, status: String, summary: Data, finishedAt: Date) async throws
}

/// The sources of truth as the job needs them: everything known about one user.
public protocol FactSource: Sendable {
    func facts(for row: UserRow) async -> SourceFacts
}
