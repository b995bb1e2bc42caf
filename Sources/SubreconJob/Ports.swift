import Foundation
import SubreconCore
import SubreconDatabase

// The job's ports: small protocols it owns, one per thing it needs from the outside, passed in explicitly.
// Production: PostgreSQL (`SubscriptionDatabase`) for the database ones, `StoreFactSource` for the sources.

/// The candidates of a run, in id order (CONTRACT "Which users a run asks about").
public protocol CandidateSource: Sendable {
    func countCandidates(_ query: CandidateQuery) async throws -> Int
    func candidatePage(_ query: CandidateQuery, after lastID: String?, limit: Int) async throws -> [UserRow]
    /// The rows of `ids` within `shard`, whatever their tier, status or dates, in id order: rows a step reads by name
    /// (a transfer's holders, CONTRACT "Whose purchase it is"), never by a candidate rule. An id no row has is absent.
    func rows(named ids: [String], shard: ShardSpec) async throws -> [UserRow]
    /// Of `ids`, those no `users` row has, in the order given (CONTRACT "Commands": `--users-file`).
    func unmatchedIDs(_ ids: [String]) async throws -> [String]
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
    /// Appends verdicts at their scan positions (`seqs`) and records `progress`, atomically; a user already in the
    /// run's ledger keeps its first verdict.
    func appendVerdicts(runID: String, _ verdicts: [Verdict], seqs: [Int64], progress: RunProgress) async throws
    func ledgerTail(runID: String, afterUser: String?) async throws -> LedgerTail
    /// The ledger in seq order, `limit` entries after `afterSeq`, each verdict read back with its outcome and queued
    /// intents.
    func ledgerPage(runID: String, afterSeq: Int64, limit: Int) async throws -> [LedgerEntry]
    /// The refunds the ledger's verdicts carry (`Verdict.refunds`), in seq order: the first `limit` entries after
    /// `afterSeq` that carry any, read without the rest of their verdicts.
    func ledgerRefunds(runID: String, afterSeq: Int64, limit: Int) async throws -> [LedgerRefunds]
    /// Applies verdicts; one compare-and-set per row, each atomic with its audit row, intents and (with `ledger`)
    /// its outcome in the run's ledger.
    func applyDetailed(_ verdicts: [Verdict], runID: String, ledger: Bool) async throws -> [AppliedVerdict]
    /// The line transfers the run's verdicts name (`Verdict.transfers`).
    func ledgerTransfers(runID: String) async throws -> [LineTransfer]
    /// Replaces each user's verdict not yet applied in the run's ledger, or appends it after the last when the user
    /// has none; a verdict already applied is kept.
    func replaceVerdicts(runID: String, _ verdicts: [Verdict]) async throws
    func markUnchanged(runID: String, seqs: [Int64]) async throws
}

/// Past runs with their stored summaries (the HTML chart, the last-success metric).
public protocol RunHistory: Sendable {
    func recentRunSummaries(shard: ShardSpec?, limit: Int) async throws -> [RunHistoryEntry]
}

/// Users named by store feeds, kept per run so the keyset scan unions them with the CONTRACT "Which users a run asks about" rules
/// (`reconcile_run_candidates`), and the default start of the feeds' window.
public protocol FeedCandidates: Sendable {
    /// With `freeOnly`, only rows holding no tier (an inventory's live purchases: CONTRACT "Which users a run asks about").
    func addFeedCandidates(
        runID: String, column: FeedColumn, identifiers: [String], reason: CandidateReason, freeOnly: Bool
    ) async throws -> FeedMatch
    /// The users a feed names, read only (a dry run writes nothing).
    func feedUsers(column: FeedColumn, identifiers: [String], freeOnly: Bool) async throws -> (users: [String], unmatched: Int)
    /// The users whose `column` holds each identifier (read only): whom a feed's refunds belong to.
    func feedUserIDs(column: FeedColumn, identifiers: [String]) async throws -> [String: [String]]
    func lastCompletedNightlyStart(shard: ShardSpec) async throws -> Date?
    /// This shard's recorded attempts at a feed (CONTRACT "Hostile answers and bounded work", `FeedWindowRule`); nil when never attempted.
    func feedAttempts(feed: String, shard: ShardSpec, asOf: Date, days: Double) async throws -> [FeedAttempt]?
    /// Records the window a run starts reading a feed over: not covered until `completeFeedWindow`.
    func beginFeedWindow(runID: String, feed: String, shard: ShardSpec, since: Date, until: Date) async throws
    /// Marks a run's window of a feed as read to its end.
    func completeFeedWindow(runID: String, feed: String) async throws
    /// Records tonight's sweep share (CONTRACT "Which users a run asks about") as candidates of `runID`; idempotent.
    func recordSweep(_ query: CandidateQuery, runID: String) async throws
}

/// Linking and orphans (CONTRACT "Whose purchase it is"): whose account a store named, the links a run made, the orphans kept across nights.
public protocol PurchaseLinks: Sendable {
    /// The users whose `id`, or optional `account_token`, is each account (an Apple `appAccountToken` compared
    /// case-insensitively); an account more than one row claims maps to all of them.
    func owners(ofAccounts accounts: [BuyerAccount]) async throws -> [BuyerAccount: [String]]
    /// The users among `identifiers` of `column` that a row holds (read only): which purchases are unlinked.
    func heldIdentifiers(column: FeedColumn, identifiers: [String]) async throws -> Set<String>
    /// Records tonight's links as candidates of `runID` (reason `linked_purchase`); idempotent.
    func addLinks(runID: String, _ links: [PurchaseLink]) async throws
    /// The links recorded for `runID`, by user and source.
    func links(runID: String) async throws -> [String: [FactOrigin: String]]
    /// Keeps tonight's orphans (first and last night seen, by store and identifier) and returns them as kept.
    func recordOrphans(runID: String, night: Date, _ orphans: [Orphan]) async throws -> [Orphan]
    /// The orphans run `runID` kept: a resumed run lists them again without reading the feeds.
    func orphans(runID: String) async throws -> [Orphan]
}

/// Everything the job asks of its database, as one value; each phase takes only the port it needs.
public typealias ReconcileDatabase = CandidateSource & CatalogSource & RunJournal & VerdictRecords & RunHistory & FeedCandidates

/// The job's database ports, one per role, so a caller (or a test) can replace one without forwarding the rest.
public struct JobPorts: Sendable {
    public var candidates: any CandidateSource
    public var catalog: any CatalogSource
    public var journal: any RunJournal
    public var verdicts: any VerdictRecords
    /// nil: the charts show this run only.
    public var history: (any RunHistory)?
    /// nil: no store feeds (the CONTRACT "Which users a run asks about" rules and the sweep only).
    public var feeds: (any FeedCandidates)?
    /// nil: no refund review (`refunds_seen`, `refund_review.csv`).
    public var refunds: (any RefundRecords)?
    /// nil: unlinked purchases are counted only (no linking, no orphans kept).
    public var links: (any PurchaseLinks)?

    public init(
        candidates: any CandidateSource, catalog: any CatalogSource, journal: any RunJournal, verdicts: any VerdictRecords,
        history: (any RunHistory)?, feeds: (any FeedCandidates)? = nil
    ) {
        self.feeds = feeds
        self.candidates = candidates
        self.catalog = catalog
        self.journal = journal
        self.verdicts = verdicts
        self.history = history
    }

    /// Every port served by one database.
    public init(_ database: any ReconcileDatabase) {
        self.init(
            candidates: database, catalog: database, journal: database, verdicts: database, history: database, feeds: database)
        refunds = database as? any RefundRecords
        links = database as? any PurchaseLinks
    }
}

extension SubscriptionDatabase: CandidateSource, CatalogSource, RunJournal, VerdictRecords, RunHistory, FeedCandidates {}

/// The sources of truth as the job needs them: everything known about one user.
public protocol FactSource: Sendable {
    func facts(for row: UserRow) async -> SourceFacts
    /// The sources a user is asked, in the order they are asked: a lookup cut off by its deadline is reported as the
    /// first one's (a per-user deadline is no single source's; this names one that is configured).
    var origins: [FactOrigin] { get }
    /// The configured store feeds (CONTRACT "Which users a run asks about"), in the order they are read.
    var feedOrigins: [FactOrigin] { get }
    /// One configured store feed read over `[since, until)`; nil when `origin` has none.
    func feed(_ origin: FactOrigin, since: Date, until: Date) async -> FeedRead?
    /// The configured store inventories (CONTRACT "Which users a run asks about": Stripe's live subscriptions), in the order they are read.
    var inventoryOrigins: [FactOrigin] { get }
    /// One store's inventory at the time of the read: every live purchase, as `FeedEntries.purchases` (each also in
    /// `identifiers`); nil when `origin` has none.
    func inventory(_ origin: FactOrigin) async -> FeedRead?
}

extension FactSource {
    /// RevenueCat, unless the source says otherwise.
    public var origins: [FactOrigin] { [.revenueCat] }
    /// No feeds unless the source has some.
    public var feedOrigins: [FactOrigin] { [] }
    public func feed(_ origin: FactOrigin, since: Date, until: Date) async -> FeedRead? { nil }
    public var inventoryOrigins: [FactOrigin] { [] }
    public func inventory(_ origin: FactOrigin) async -> FeedRead? { nil }
}

/// What one store feed said over the window: the store identifiers it named (each finds a user by `column`).
public struct FeedRead: Sendable {
    public var source: FactOrigin
    public var reason: CandidateReason
    public var column: FeedColumn
    public var result: Result<FeedEntries, SourceError>

    public init(source: FactOrigin, reason: CandidateReason, column: FeedColumn, result: Result<FeedEntries, SourceError>) {
        self.source = source
        self.reason = reason
        self.column = column
        self.result = result
    }
}

/// The entries of a feed that were believed, and how many were not.
public struct FeedEntries: Sendable {
    /// Store identifiers named by the entries (duplicates allowed).
    public var identifiers: [String]
    /// Entries read (after deduplication by the feed's own id).
    public var entries: Int
    /// Entries that failed verification (forged, another app's): counted and ignored.
    public var rejected: Int
    /// The refunds the believed entries state (CONTRACT "Finance figures": a refund seen in a feed is kept like one seen in a lookup).
    public var refunds: [FeedRefund]
    /// The purchases the believed entries state, each with the identifier its row would hold: those no row holds are
    /// linked to the account their store names, or listed as orphans (CONTRACT "Whose purchase it is"). Empty for a feed that states none
    /// (Google's voided purchases).
    public var purchases: [UnlinkedPurchase]

    public init(
        identifiers: [String], entries: Int, rejected: Int = 0, refunds: [FeedRefund] = [], purchases: [UnlinkedPurchase] = []
    ) {
        self.purchases = purchases
        self.identifiers = identifiers
        self.entries = entries
        self.rejected = rejected
        self.refunds = refunds
    }
}

/// A refund a feed entry states, for the user whose row holds `identifier` in the feed's column.
public struct FeedRefund: Sendable, Hashable {
    /// The value of the feed's column (Apple original transaction id, Google purchase token, Stripe customer id).
    public var identifier: String
    /// Keyed exactly as `SeenRefund.of` keys the same refund seen in a lookup (store, transaction id).
    public var refund: SeenRefund
    /// nil when the entry did not say; a production run keeps no sandbox refund.
    public var isSandbox: Bool?

    public init(identifier: String, refund: SeenRefund, isSandbox: Bool?) {
        self.identifier = identifier
        self.refund = refund
        self.isSandbox = isSandbox
    }

    /// The refunds feed entries state, each entry given as the identifier that finds its user and the refunded
    /// purchase built by the same mapping a lookup uses: keyed and priced by `SeenRefund.of`, as a lookup's are.
    public static func of(_ entries: [(identifier: String, purchase: PurchaseFact)], asOf: Date) -> [FeedRefund] {
        entries.flatMap { entry in
            SeenRefund.of([entry.purchase], asOf: asOf).map {
                FeedRefund(identifier: entry.identifier, refund: $0, isSandbox: entry.purchase.isSandbox)
            }
        }
    }
}

extension SubscriptionDatabase: PurchaseLinks {}
