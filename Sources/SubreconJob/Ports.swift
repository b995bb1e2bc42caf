import Foundation
import SubreconCore
import SubreconPorts

// The job's ports: small protocols it owns, one per thing it needs from the outside, passed in explicitly.
// Production: PostgreSQL (`SubscriptionDatabase`) for the database ones, `StoreFactSource` for the sources.

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
    /// nil: a run keeps none of its report inputs (`report RUN_ID` then rebuilds them from today's tables).
    public var reports: (any RunReportRecords)?

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

    /// Every port served by one database, each named: no port is found by a cast.
    public init(_ database: any DatabasePorts) {
        self.init(
            candidates: database, catalog: database, journal: database, verdicts: database, history: database, feeds: database)
        refunds = database
        links = database
        reports = database
    }
}

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
