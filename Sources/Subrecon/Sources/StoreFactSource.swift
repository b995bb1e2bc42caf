import AppStore
import AsyncHTTPClient
import Foundation
import Logging
import RevenueCat
import SourceHTTP
import SubreconCore

/// One store the job asks about a user, after RevenueCat when RevenueCat is configured: the authority for its own
/// purchases (SPEC 5.2). A new source is a module (wire types, client over `SourceHTTP`, mapping to `PurchaseFact`)
/// plus one adapter conforming to this, registered in `StoreFactSource.registry`.
public protocol StoreSource: Sendable {
    /// The source's name in the `sources` column.
    var origin: FactOrigin { get }
    /// One line for the summary: what it asks and how.
    var note: String { get }
    /// Asks the store about this user when the row or the facts gathered so far name one of its purchases, and
    /// records what it said in `facts`: store facts, `unknownTo` for an identifier it does not know (absence), an
    /// error for anything it could not answer, and `noteAsked` for every source it asked.
    func ask(row: UserRow, facts: inout SourceFacts) async
    /// The source as configured, nil when its variables are unset; throws a `ConfigError` when they are unusable.
    static func make(configuration: SubreconConfiguration, context: SourceContext) throws -> Self?
    /// True when the store, as configured, has an event feed (`feed` answers).
    var hasFeed: Bool { get }
    /// The store's event feed over `[since, until)` (SPEC 5.1), or nil when it has none.
    func feed(since: Date, until: Date) async -> FeedRead?
}

extension StoreSource {
    public var hasFeed: Bool { false }
    public func feed(since: Date, until: Date) async -> FeedRead? { nil }
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
}

/// The production `FactSource`: RevenueCat for every user when configured, then every configured store in
/// `registry` order; each store's facts override RevenueCat's view of its own purchases in the core's `merge`.
public struct StoreFactSource: FactSource {
    /// Every store source subrecon knows, in the order they are asked. Adding a source: one line here.
    static let registry: [any StoreSource.Type] = [
        AppStoreSource.self,
        GooglePlaySource.self,
        StripeSource.self,
    ]

    public let revenueCat: RevenueCatClient?
    public let stores: [any StoreSource]
    /// One line per source for the summary ("says so in the summary" when a source is not configured).
    public let notes: [String: String]

    /// - Parameters:
    ///   - gates: shared rate limiters (absent: unpaced), one per source for the whole run.
    ///   - receipts: where stored legacy receipts are read (the bridge runs only with `APPLE_SHARED_SECRET`).
    public init(
        configuration: SubreconConfiguration, httpClient: HTTPClient, stats: RequestStats, logger: Logger,
        gates: [FactOrigin: any RequestGate] = [:], receipts: (any ReceiptLookup)? = nil
    ) throws(ConfigError) {
        let context = SourceContext(httpClient: httpClient, stats: stats, logger: logger, gates: gates, receipts: receipts)
        var notes: [String: String] = [:]
        if let revenueCatConfiguration = configuration.revenueCat {
            revenueCat = RevenueCatClient(
                httpClient: httpClient, configuration: revenueCatConfiguration, logger: logger, observer: stats,
                gate: gates[.revenueCat])
            notes["revenuecat"] = "v1 REST at \(revenueCatConfiguration.baseURL)"
        } else {
            revenueCat = nil
            notes["revenuecat"] = "not configured: users are judged on the stores configured"
        }
        var stores: [any StoreSource] = []
        for kind in Self.registry {
            do {
                if let store = try kind.make(configuration: configuration, context: context) { stores.append(store) }
            } catch let error as ConfigError {
                throw error
            } catch {
                throw ConfigError(String(describing: kind), "cannot be set up: \(error)")
            }
        }
        for store in stores { notes[store.origin.rawValue] = store.note }
        for origin in [FactOrigin.appStore, .stripe, .googlePlay] where notes[origin.rawValue] == nil {
            notes[origin.rawValue] =
                revenueCat == nil ? "not configured" : "not configured: its purchases are judged on RevenueCat alone"
        }
        if revenueCat == nil && stores.isEmpty { throw ConfigError.noSource }
        self.stores = stores
        self.notes = notes
    }

    public func facts(for row: UserRow) async -> SourceFacts {
        var facts = SourceFacts(subscriberKnown: false, purchases: [])
        if let revenueCat {
            facts = await revenueCat.facts(for: row.id)
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

    public func feed(_ origin: FactOrigin, since: Date, until: Date) async -> FeedRead? {
        await store(origin)?.feed(since: since, until: until)
    }

    /// The store source of this origin, when configured.
    public func store(_ origin: FactOrigin) -> (any StoreSource)? {
        stores.first { $0.origin == origin }
    }
}

extension ConfigError {
    /// `run` without any source configured (SPEC 3).
    static let noSource = ConfigError(
        "REVENUECAT_API_KEY",
        "is not set, and no other source is configured: set at least one of REVENUECAT_API_KEY; APP_STORE_ISSUER_ID + APP_STORE_KEY_ID + APP_STORE_PRIVATE_KEY + APP_STORE_BUNDLE_ID; APPLE_SHARED_SECRET + APP_STORE_BUNDLE_ID; STRIPE_API_KEY; GOOGLE_PLAY_SERVICE_ACCOUNT + GOOGLE_PLAY_PACKAGE_NAME"
    )
}
