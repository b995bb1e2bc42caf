import AsyncHTTPClient
import Foundation
import Logging
import RevenueCat
import SourceHTTP
import SubreconCore
import SubreconJob
import SubreconPorts

/// One store the job asks about a user, after RevenueCat when RevenueCat is configured: the authority for its own
/// purchases (CONTRACT "Sources and the decision"). A new store is a module (wire types, client over `SourceHTTP`, mapping to `PurchaseFact`)
/// plus one adapter conforming to this, listed in `StoreRegistry.stores`. The adapter declares everything the rest
/// of the job needs to know about the store; nothing outside its module and adapter names it but the `FactOrigin`
/// case, its migration and RevenueCat's name for it.
public protocol StoreSource: Sendable {
    /// What the store's environment variables configure (validated before anything is touched).
    associatedtype Configuration: Sendable, CustomStringConvertible
    /// The source's name in the `sources` column (its `FactOrigin` case).
    static var origin: FactOrigin { get }
    /// The `users` columns that hold its identifiers (optional in `users`; required once the store is configured).
    static var identifierColumns: [IdentifierColumn] { get }
    /// The run option naming its request budget (`google-play` → `--google-play-rps`), and the default budget for
    /// the whole app in requests per second for an environment (0 = unlimited).
    static var rateOption: String { get }
    static func defaultRequestsPerSecond(_ environment: StoreEnvironment) -> Double
    /// The environment variables that configure it, as `run` names them when no source is.
    static var variables: String { get }
    /// The `candidate_reason` of the users its feed names (`CandidateReason.feed`); nil for a store without a feed.
    static var feedReason: CandidateReason? { get }
    /// Reads its environment variables: nil when they are unset, a `ConfigError` naming the one unusable otherwise.
    static func load(_ env: ProcessEnvironment, policy: SourceRequestPolicy, environment: StoreEnvironment) throws(ConfigError)
        -> Configuration?
    /// The source for a configuration, or nil when it cannot run in this context (the receipt bridge without a
    /// database); throws a `ConfigError` when the configuration is unusable.
    static func make(_ configuration: Configuration, context: SourceContext) throws -> Self?

    /// One line for the summary: what it asks and how.
    var note: String { get }
    /// Asks the store about this user when the row or the facts gathered so far name one of its purchases, and
    /// records what it said in `facts`: store facts, `unknownTo` for an identifier it does not know (absence), an
    /// error for anything it could not answer, and `noteAsked` for every source it asked.
    func ask(row: UserRow, facts: inout SourceFacts) async
    /// True when the store, as configured, has an event feed (`feed` answers).
    var hasFeed: Bool { get }
    /// The store's event feed over `[since, until)` (CONTRACT "Which users a run asks about"), or nil when it has none.
    func feed(since: Date, until: Date) async -> FeedRead?
    /// True when the store lists its live purchases (CONTRACT "Which users a run asks about": Stripe's inventory).
    var hasInventory: Bool { get }
    /// Every live purchase the store lists now, as `FeedEntries.purchases` (CONTRACT "Which users a run asks about", "Whose purchase it is"), or nil when it has none.
    func inventory() async -> FeedRead?
    /// `subrecon doctor`'s lines for the store (docs/CONTRACT.md, "subrecon doctor"): one harmless authenticated read
    /// per part configured that proves the key and the permissions the night needs, with the store's own client and
    /// auth; a part nothing can be asked of without changing something is `notChecked`, saying why. No default: a
    /// store says itself how it is proven.
    static func credentialChecks(_ configuration: Configuration, context: SourceContext) async -> [CredentialCheck]
}

extension StoreSource {
    public var origin: FactOrigin { Self.origin }
    public var hasFeed: Bool { false }
    public func feed(since: Date, until: Date) async -> FeedRead? { nil }
    public var hasInventory: Bool { false }
    public func inventory() async -> FeedRead? { nil }
    public static var identifierColumns: [IdentifierColumn] { [] }
    public static var feedReason: CandidateReason? { nil }

    /// The store's configuration in `configuration`, when it is configured.
    static func configured(in configuration: SubreconConfiguration) -> Configuration? {
        configuration.stores[origin] as? Configuration
    }

    /// The store's doctor lines for `configuration`'s entry; nil when the store is not configured.
    static func credentialChecks(from configuration: SubreconConfiguration, context: SourceContext) async -> [CredentialCheck]? {
        guard let mine = configured(in: configuration) else { return nil }
        return await credentialChecks(mine, context: context)
    }

    /// Builds the source from `configuration`'s entry, when the store is configured.
    static func make(from configuration: SubreconConfiguration, context: SourceContext) throws -> (any StoreSource)? {
        guard let mine = configured(in: configuration) else { return nil }
        return try make(mine, context: context)
    }
}

/// What a source adapter is built with: the run's shared HTTP client, request stats, logger, rate gates and database
/// lookups.
public struct SourceContext: Sendable {
    public var httpClient: HTTPClient
    public var stats: RequestStats
    public var logger: Logger
    /// Shared rate limiters, one per source for the whole run (absent: unpaced).
    public var gates: [FactOrigin: any RequestGate]
    /// Stored receipts and which rows hold which Apple original transaction id.
    public var receipts: (any ReceiptLookup)?
    /// The refunds kept on earlier nights (a Google void read by an earlier night's feed).
    public var refundsSeen: (any RefundsSeenLookup)? = nil
}

/// The production `FactSource`: RevenueCat for every user when configured, then every configured store in
/// `registry` order; each store's facts override RevenueCat's view of its own purchases in the core's `merge`.
public struct StoreFactSource: FactSource {
    public let revenueCat: RevenueCatClient?
    /// RevenueCat's part of every lookup: v1, and v2 first when configured (`RevenueCatSource`).
    public let revenueCatSource: RevenueCatSource?
    public let stores: [any StoreSource]
    /// One line per source for the summary ("says so in the summary" when a source is not configured).
    public let notes: [String: String]

    /// - Parameters:
    ///   - gates: shared rate limiters (absent: unpaced), one per source for the whole run.
    ///   - receipts: where stored legacy receipts are read (the bridge runs only with `APPLE_SHARED_SECRET`).
    ///   - refundsSeen: where the refunds of earlier nights are read (`refunds_seen`); nil: tonight's feeds only.
    ///   - revenueCatV2Gate: RevenueCat API v2's own rate limiter (absent: unpaced).
    ///   - knownCustomers: the users RevenueCat answered for in earlier runs (nil: every user is asked v2 first).
    public init(
        configuration: SubreconConfiguration, httpClient: HTTPClient, stats: RequestStats, logger: Logger,
        gates: [FactOrigin: any RequestGate] = [:], receipts: (any ReceiptLookup)? = nil,
        refundsSeen: (any RefundsSeenLookup)? = nil, revenueCatV2Gate: (any RequestGate)? = nil,
        knownCustomers: RevenueCatMemory? = nil
    ) throws(ConfigError) {
        let context = SourceContext(
            httpClient: httpClient, stats: stats, logger: logger, gates: gates, receipts: receipts, refundsSeen: refundsSeen)
        var notes: [String: String] = [:]
        if let revenueCatConfiguration = configuration.revenueCat {
            revenueCat = RevenueCatClient(
                httpClient: httpClient, configuration: revenueCatConfiguration, logger: logger, observer: stats,
                gate: gates[.revenueCat])
            let v2 = revenueCatConfiguration.v2.map {
                RevenueCatV2Client(httpClient: httpClient, configuration: $0, logger: logger, observer: stats, gate: revenueCatV2Gate)
            }
            revenueCatSource = revenueCat.map { RevenueCatSource(v1: $0, v2: v2, memory: knownCustomers, logger: logger) }
            notes["revenuecat"] = RevenueCatSource.note(revenueCatConfiguration)
        } else {
            revenueCat = nil
            revenueCatSource = nil
            notes["revenuecat"] = "not configured: users are judged on the stores configured"
        }
        var stores: [any StoreSource] = []
        for kind in StoreRegistry.stores {
            do {
                if let store = try kind.make(from: configuration, context: context) { stores.append(store) }
            } catch let error as ConfigError {
                throw error
            } catch {
                throw ConfigError(String(describing: kind), "cannot be set up: \(error)")
            }
        }
        for store in stores { notes[store.origin.rawValue] = store.note }
        for origin in StoreRegistry.stores.map({ $0.origin }) where notes[origin.rawValue] == nil {
            notes[origin.rawValue] =
                revenueCat == nil ? "not configured" : "not configured: its purchases are judged on RevenueCat alone"
        }
        if revenueCat == nil && stores.isEmpty { throw ConfigError.noSource }
        self.stores = stores
        self.notes = notes
    }

    /// RevenueCat when configured, then the configured stores, in the order a user is asked.
    public var origins: [FactOrigin] { (revenueCat == nil ? [] : [.revenueCat]) + stores.map(\.origin) }

    public func facts(for row: UserRow) async -> SourceFacts {
        var facts = SourceFacts(revenueCatKnowsSubscriber: false, revenueCatPurchases: [])
        if let revenueCatSource {
            facts = await revenueCatSource.facts(for: row.id)
            facts.noteAsked(.revenueCat)
        }
        for store in stores {
            // Any error leaves the user untouched: the remaining stores need not be asked.
            guard facts.errors.isEmpty else { break }
            await store.ask(row: row, facts: &facts)
        }
        return facts
    }

    public var feedOrigins: [FactOrigin] { stores.filter(\.hasFeed).map(\.origin) }

    public var inventoryOrigins: [FactOrigin] { stores.filter(\.hasInventory).map(\.origin) }

    public func inventory(_ origin: FactOrigin) async -> FeedRead? {
        await store(origin)?.inventory()
    }

    public func feed(_ origin: FactOrigin, since: Date, until: Date) async -> FeedRead? {
        await store(origin)?.feed(since: since, until: until)
    }

    /// The store source of this origin, when configured.
    public func store(_ origin: FactOrigin) -> (any StoreSource)? {
        stores.first { $0.origin == origin }
    }
}

extension ConfigError {
    /// `run` without any source configured (CONTRACT "Environment").
    static var noSource: ConfigError {
        ConfigError(
            "REVENUECAT_API_KEY",
            "is not set, and no other source is configured: set at least one of REVENUECAT_API_KEY; "
                + StoreRegistry.stores.map { $0.variables }.joined(separator: "; "))
    }
}
