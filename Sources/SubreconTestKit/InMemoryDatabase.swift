import Foundation
import SubreconCore
import SubreconJob
import SubreconPorts
import Synchronization

/// The job's database ports in memory, for unit tests of the job's behaviour without PostgreSQL: the `users` rows,
/// the catalog, the runs (`reconcile_runs`), each run's ledger (`reconcile_verdicts`), the audit rows
/// (`reconcile_changes`), the push intents, the run candidates and links — with the semantics of
/// the PostgreSQL adapters (`SubreconDatabase`) where the job relies on them:
///
/// - candidates are keyset pages in id order after `lastID`, selected by the rules of docs/CONTRACT.md "Which users
///   a run asks about" (`CandidateRulesModel`: the rules, the sweeps' buckets, the recorded run candidates, backfill,
///   `--users-file`, the end-date bounds and the shard) tested on the stored row; a row stored with `rowError` set
///   (one PostgreSQL could not read) is a candidate of every selection that names it or scans every row;
/// - a user already in a run's ledger keeps its first verdict; `ledgerTail` is every user of the run's ledger whose
///   id sorts after the cursor, with the first free seq;
/// - `applyDetailed` is a compare-and-set on `updatedAtMicros` per row, atomic with its audit row, its intents
///   (deduplicated by `dedupe_key` across runs) and its ledger outcome; a lost CAS is `concurrentUpdate` when the row
///   still exists, `notFound` when it is gone, and writes nothing (docs/CONTRACT.md "Applying");
/// - ids compare in Swift's `String` order (PostgreSQL's C collation for ASCII ids).
///
/// The ledger keeps the `Verdict` values themselves (PostgreSQL keeps their JSON). Every call is recorded in
/// `events`, so a test can tell the order the phases wrote in.
public final class InMemoryDatabase: Sendable {
    /// One row of `reconcile_changes`.
    public struct AuditRow: Sendable, Hashable {
        public var runID: String
        public var userID: String
        public var before: UserRow
        public var after: Entitlement
        public var action: Action
        public var drift: [Drift]
    }

    /// One row of `push_intents`.
    public struct QueuedIntent: Sendable, Hashable {
        public var runID: String
        public var intent: PushIntent
    }

    /// A write the job made, in the order it made them.
    public enum Event: Sendable, Hashable {
        case startRun(String)
        case setRunStatus(RunStatus)
        case recordSelection
        /// The users whose verdicts were appended (in the order given).
        case appendVerdicts([String])
        /// The users whose verdicts were handed to `applyDetailed` (in the order given).
        case apply([String])
        case markUnchanged([Int64])
        case replaceVerdicts([String])
        case finishRun(RunStatus)
    }

    /// A write that fails on purpose (the database went away mid-run).
    public struct InjectedFailure: Error, CustomStringConvertible {
        public var operation: String
        public var description: String { "injected failure: \(operation)" }
    }

    struct Entry: Sendable {
        var seq: Int64
        var userID: String
        var verdict: Verdict
        var outcome: LedgerOutcome?
        var queuedIntents: [PushIntent] = []
    }

    struct Run: Sendable {
        var record: RunRecord
        var selection: Data?
        var progress = RunProgress()
        var summary: Data?
    }

    struct State: Sendable {
        var users: [String: UserRow] = [:]
        var catalog: ProductCatalog
        var runs: [String: Run] = [:]
        var ledgers: [String: [Entry]] = [:]
        var audits: [AuditRow] = []
        var intents: [String: QueuedIntent] = [:]
        var intentOrder: [String] = []
        var events: [Event] = []
        /// `reconcile_run_candidates`: run → user → reasons.
        var runCandidates: [String: [String: [CandidateReason]]] = [:]
        /// `reconcile_run_links`: run → user → source → identifier.
        var links: [String: [String: [FactOrigin: String]]] = [:]
        var orphans: [String: [Orphan]] = [:]
        var keptOrphans: [String: Orphan] = [:]
        var feedWindows: [FeedWindow] = []
        /// `refunds_seen`: "store|transaction id" → the refund, its user and the run that kept it first.
        var refundsSeen: [String: (userID: String, refund: SeenRefund, runID: String)] = [:]
        var applyCalls = 0
        var failApplyOnCall: Int?
        /// `apple_receipts`: user → the stored base64 receipt.
        var receipts: [String: String] = [:]
        /// `revenuecat_known_customers`: the users RevenueCat answered for.
        var knownRevenueCatCustomers: Set<String> = []
        /// The report inputs each run kept (`RunReportRecords`).
        var runReports: [String: [String: String]] = [:]
    }

    struct FeedWindow: Sendable {
        var runID: String
        var feed: String
        var shard: ShardSpec
        var since: Date
        var until: Date
        var complete: Bool
    }

    let state: Mutex<State>
    /// The instant `updated_at` is set from on a write (PostgreSQL's `now()`).
    let now: @Sendable () -> Date
    /// The stores' identifier columns `users` has (what a `FeedColumn` other than Apple's finds a row by).
    let identifierColumns: [IdentifierColumn]

    public init(
        catalog: ProductCatalog = ProductCatalog([]), identifierColumns: [IdentifierColumn] = IdentifierColumn.testColumns,
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        state = Mutex(State(catalog: catalog))
        self.now = now
        self.identifierColumns = identifierColumns
    }

    // MARK: - What a test seeds and reads

    /// Inserts or replaces rows; a row with `updatedAtMicros` 0 gets the clock's instant; a blank identifier is stored as
    /// none, as PostgreSQL's row reader answers it.
    public func insert(_ rows: [UserRow]) {
        let micros = Self.micros(now())
        state.withLock { state in
            for var row in rows {
                if row.updatedAtMicros == 0 { row.updatedAtMicros = micros }
                // As PostgreSQL reads them: an empty or whitespace-only identifier is none (CONTRACT "Database").
                row.originalTransactionID = UserRow.storedIdentifier(row.originalTransactionID)
                row.accountToken = UserRow.storedIdentifier(row.accountToken)
                row.identifiers = row.identifiers.compactMapValues(UserRow.storedIdentifier)
                state.users[row.id] = row
            }
        }
    }

    /// Another writer (the app's webhook) changes a row: `updated_at` moves on, so a verdict read before loses its CAS.
    public func webhookWrite(_ id: String, _ change: (inout UserRow) -> Void) {
        let micros = Self.micros(now())
        state.withLock { state in
            guard var row = state.users[id] else { return }
            change(&row)
            row.updatedAtMicros = max(micros, row.updatedAtMicros + 1)
            state.users[id] = row
        }
    }

    /// Deletes a row (a verdict about it is then `notFound`).
    public func delete(_ id: String) { _ = state.withLock { $0.users.removeValue(forKey: id) } }

    public func user(_ id: String) -> UserRow? { state.withLock { $0.users[id] } }
    public var users: [UserRow] { state.withLock { $0.users.values.sorted { $0.id < $1.id } } }
    public var audits: [AuditRow] { state.withLock { $0.audits } }
    public var intents: [QueuedIntent] { state.withLock { state in state.intentOrder.compactMap { state.intents[$0] } } }
    public var events: [Event] { state.withLock { $0.events } }
    public func audits(of userID: String) -> [AuditRow] { audits.filter { $0.userID == userID } }
    public func intents(of userID: String) -> [QueuedIntent] { intents.filter { $0.intent.userID == userID } }

    /// Run `runID`'s ledger in seq order.
    public func ledger(runID: String) -> [LedgerEntry] {
        state.withLock { state in
            (state.ledgers[runID] ?? []).sorted { $0.seq < $1.seq }.map {
                LedgerEntry(seq: $0.seq, verdict: $0.verdict, outcome: $0.outcome, queuedIntents: $0.queuedIntents)
            }
        }
    }

    public func runStatus(_ runID: String) -> RunStatus? { state.withLock { $0.runs[runID]?.record.status } }
    public func progress(_ runID: String) -> RunProgress? { state.withLock { $0.runs[runID]?.progress } }

    /// The `call`-th `applyDetailed` from now (1 = the next) throws `InjectedFailure` and writes nothing.
    public func failApply(onCall call: Int) {
        state.withLock { $0.failApplyOnCall = $0.applyCalls + call }
    }

    static func micros(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1_000_000).rounded()) }
}

// MARK: - CandidateSource, CatalogSource

extension InMemoryDatabase: CandidateSource, CatalogSource {
    public func countCandidates(_ query: CandidateQuery) async throws -> Int {
        state.withLock { state in state.users.values.count(where: { Self.selects(query, $0, state: state) }) }
    }

    public func rows(named ids: [String], shard: ShardSpec) async throws -> [UserRow] {
        let wanted = Set(ids)
        return state.withLock { state in
            state.users.values.filter { wanted.contains($0.id) && shard.contains($0.id) }.sorted { $0.id < $1.id }
        }
    }

    public func unmatchedIDs(_ ids: [String]) async throws -> [String] {
        state.withLock { state in ids.filter { state.users[$0] == nil } }
    }

    public func candidatePage(_ query: CandidateQuery, after lastID: String?, limit: Int) async throws -> [UserRow] {
        state.withLock { state in
            let rows = state.users.values.compactMap { row -> UserRow? in
                guard lastID.map({ row.id > $0 }) ?? true, let reasons = Self.reasons(query, row, state: state) else { return nil }
                var row = row
                row.candidateReasons = query.reasons(met: reasons)
                return row
            }
            return Array(rows.sorted { $0.id < $1.id }.prefix(max(1, limit)))
        }
    }

    public func loadCatalog() async throws -> ProductCatalog { state.withLock { $0.catalog } }

    /// Whether `query` selects `row` (the SQL of `CandidateQuery`, on the stored row).
    static func selects(_ query: CandidateQuery, _ row: UserRow, state: State) -> Bool {
        reasons(query, row, state: state) != nil
    }

    /// The reasons `query` selects `row` for, as the SQL of `CandidateQuery` states them; nil when it does not select
    /// it. A row stored with `rowError` is selected by every selection that names it or scans every row.
    static func reasons(_ query: CandidateQuery, _ row: UserRow, state: State) -> [CandidateReason]? {
        if let ids = query.userIDs, !ids.contains(row.id) { return nil }
        if !query.shard.contains(row.id) { return nil }
        if row.rowError != nil { return CandidateRulesModel.rules(row: row, asOf: query.asOf, lookbackDays: query.lookbackDays) }
        if let after = query.endAfter, !(row.endDate.map { $0 >= after } ?? false) { return nil }
        if let before = query.endBefore, !(row.endDate.map { $0 < before } ?? false) { return nil }
        switch query.mode {
        case .backfill:
            let selected = row.currentTier > 0 || row.statusText != SubscriptionStatus.none.rawValue || row.endDate != nil
            return selected ? [.backfill] : nil
        case .nightly:
            var reasons = CandidateRulesModel.rules(row: row, asOf: query.asOf, lookbackDays: query.lookbackDays)
            reasons += query.namedUsers?[row.id] ?? []
            if let runID = query.runCandidatesID {
                reasons += state.runCandidates[runID]?[row.id] ?? []
            } else {
                reasons += CandidateRulesModel.sweeps(query, row)
            }
            return reasons.isEmpty ? nil : reasons
        }
    }
}

// MARK: - RunJournal, RunHistory

extension InMemoryDatabase: RunJournal, RunHistory {
    public func startRun(_ record: RunRecord) async throws {
        try state.withLock { state in
            guard state.runs[record.id] == nil else { throw InjectedFailure(operation: "start run: \(record.id) exists") }
            state.runs[record.id] = Run(record: record)
            state.events.append(.startRun(record.id))
        }
    }

    public func finishRun(id: String, status: RunStatus, summary: Data, finishedAt: Date) async throws {
        state.withLock { state in
            state.runs[id]?.record.status = status
            state.runs[id]?.record.finishedAt = finishedAt
            state.runs[id]?.summary = summary
            state.events.append(.finishRun(status))
        }
    }

    public func setRunStatus(id: String, _ status: RunStatus) async throws {
        state.withLock { state in
            state.runs[id]?.record.status = status
            state.runs[id]?.record.finishedAt = nil
            state.events.append(.setRunStatus(status))
        }
    }

    public func recordSelection(runID: String, selection: Data) async throws {
        state.withLock { state in
            state.runs[runID]?.selection = selection
            state.events.append(.recordSelection)
        }
    }

    public func storedRun(id: String) async throws -> StoredRun? {
        state.withLock { state in
            state.runs[id].map { StoredRun(record: $0.record, selection: $0.selection, progress: $0.progress, summary: $0.summary) }
        }
    }

    public func recentRunSummaries(shard: ShardSpec?, limit: Int) async throws -> [RunHistoryEntry] {
        state.withLock { state in
            let runs = state.runs.values.filter { shard == nil || $0.record.shard == shard }
                .sorted { ($0.record.startedAt, $0.record.id) > ($1.record.startedAt, $1.record.id) }
            return runs.prefix(max(1, limit)).map {
                RunHistoryEntry(
                    id: $0.record.id, status: $0.record.status, startedAt: $0.record.startedAt, finishedAt: $0.record.finishedAt,
                    countsJSON: $0.summary ?? Data("{}".utf8))
            }
        }
    }
}

// MARK: - VerdictRecords

extension InMemoryDatabase: VerdictRecords {
    public func appendVerdicts(runID: String, _ verdicts: [Verdict], seqs: [Int64], progress: RunProgress) async throws {
        guard verdicts.count == seqs.count else { throw InjectedFailure(operation: "record verdicts: counts differ") }
        state.withLock { state in
            var ledger = state.ledgers[runID] ?? []
            for (seq, verdict) in zip(seqs, verdicts)
            where !ledger.contains(where: { $0.seq == seq || $0.userID == verdict.row.id }) {
                ledger.append(Entry(seq: seq, userID: verdict.row.id, verdict: verdict))
            }
            state.ledgers[runID] = ledger
            state.runs[runID]?.progress = progress
            state.events.append(.appendVerdicts(verdicts.map(\.row.id)))
        }
    }

    public func ledgerTail(runID: String, afterUser: String?) async throws -> LedgerTail {
        state.withLock { state in
            let ledger = state.ledgers[runID] ?? []
            let users = ledger.map(\.userID).filter { id in afterUser.map { id > $0 } ?? true }
            return LedgerTail(userIDs: Set(users), nextSeq: (ledger.map(\.seq).max() ?? -1) + 1)
        }
    }

    public func ledgerPage(runID: String, afterSeq: Int64, limit: Int) async throws -> [LedgerEntry] {
        Array(ledger(runID: runID).filter { $0.seq > afterSeq }.prefix(limit))
    }

    public func ledgerRefunds(runID: String, afterSeq: Int64, limit: Int) async throws -> [LedgerRefunds] {
        Array(ledger(runID: runID).filter { $0.seq > afterSeq }.compactMap(LedgerRefunds.init).prefix(limit))
    }

    public func applyDetailed(_ verdicts: [Verdict], runID: String, ledger: Bool) async throws -> [AppliedVerdict] {
        try state.withLock { state in
            state.applyCalls += 1
            if state.applyCalls == state.failApplyOnCall { throw InjectedFailure(operation: "apply") }
            state.events.append(.apply(verdicts.map(\.row.id)))
            return verdicts.map { verdict in
                guard verdict.changesRow, let truth = verdict.truth else { return AppliedVerdict.unchanged }
                let result = Self.apply(verdict, truth: truth, runID: runID, state: &state, micros: Self.micros(now()))
                if ledger {
                    for index in state.ledgers[runID, default: []].indices where state.ledgers[runID]![index].userID == verdict.row.id {
                        state.ledgers[runID]![index].outcome = result.outcome.ledgerOutcome
                        state.ledgers[runID]![index].queuedIntents = result.queuedIntents
                    }
                }
                return result
            }
        }
    }

    /// One row's compare-and-set with its audit row and intents (docs/CONTRACT.md "Applying").
    static func apply(_ verdict: Verdict, truth: Entitlement, runID: String, state: inout State, micros: Int64) -> AppliedVerdict {
        guard var row = state.users[verdict.row.id] else { return AppliedVerdict.lost(.notFound) }
        guard row.rowError == nil, row.updatedAtMicros == verdict.row.updatedAtMicros else { return AppliedVerdict.lost(.concurrentUpdate) }
        let read = verdict.row
        row.currentTier = truth.tier
        row.statusText = truth.status.rawValue
        if !(read.endDate == nil && truth.endDate == nil) { row.endDate = truth.endDate }
        if !(read.graceEndsAt == nil && truth.graceEndsAt == nil) { row.graceEndsAt = truth.graceEndsAt }
        if !(read.originalTransactionID == nil && truth.originalTransactionID == nil) {
            row.originalTransactionID = truth.originalTransactionID
        }
        row.source = truth.source
        row.productID = truth.productID
        row.autoRenew = truth.autoRenew
        for (origin, value) in truth.storeIdentifiers where !value.isEmpty && value != read.identifiers[origin] {
            row.identifiers[origin] = value
        }
        row.updatedAtMicros = max(micros, row.updatedAtMicros + 1)
        state.users[row.id] = row
        state.audits.append(
            AuditRow(runID: runID, userID: row.id, before: read, after: truth, action: verdict.action, drift: verdict.drift))
        var queued: [PushIntent] = []
        var deduplicated: [PushIntent] = []
        for intent in verdict.intents {
            if state.intents[intent.dedupeKey] == nil {
                state.intents[intent.dedupeKey] = QueuedIntent(runID: runID, intent: intent)
                state.intentOrder.append(intent.dedupeKey)
                queued.append(intent)
            } else {
                deduplicated.append(intent)
            }
        }
        return AppliedVerdict(
            outcome: .applied(intentsQueued: queued.count, intentsDeduplicated: deduplicated.count), queuedIntents: queued,
            deduplicatedIntents: deduplicated)
    }

    public func ledgerTransfers(runID: String) async throws -> [LineTransfer] {
        ledger(runID: runID).flatMap { $0.verdict.transfers ?? [] }
    }

    public func replaceVerdicts(runID: String, _ verdicts: [Verdict]) async throws {
        state.withLock { state in
            var ledger = state.ledgers[runID] ?? []
            for verdict in verdicts {
                let user = verdict.row.id
                if ledger.contains(where: { $0.userID == user }) {
                    for index in ledger.indices where ledger[index].userID == user && ledger[index].outcome == nil {
                        ledger[index].verdict = verdict
                    }
                } else {
                    ledger.append(Entry(seq: (ledger.map(\.seq).max() ?? -1) + 1, userID: user, verdict: verdict))
                }
            }
            state.ledgers[runID] = ledger
            state.events.append(.replaceVerdicts(verdicts.map(\.row.id)))
        }
    }

    public func markUnchanged(runID: String, seqs: [Int64]) async throws {
        guard !seqs.isEmpty else { return }
        state.withLock { state in
            let marked = Set(seqs)
            for index in state.ledgers[runID, default: []].indices
            where marked.contains(state.ledgers[runID]![index].seq) && state.ledgers[runID]![index].outcome == nil {
                state.ledgers[runID]![index].outcome = .unchanged
            }
            state.events.append(.markUnchanged(seqs))
        }
    }
}

extension AppliedVerdict {
    static let unchanged = lost(.unchanged)

    static func lost(_ outcome: ApplyOutcome) -> AppliedVerdict {
        AppliedVerdict(outcome: outcome, queuedIntents: [], deduplicatedIntents: [])
    }
}
