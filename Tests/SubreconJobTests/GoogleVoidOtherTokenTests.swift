import Foundation
import Logging
import SubreconCore
import SubreconPorts
import SubreconReports
import SubreconTestKit
import Synchronization
import Testing

@testable import SubreconJob

/// A Google void naming the line's OTHER identifier (docs/CONTRACT.md "Sources and the decision": a refund is a fact
/// about its line; "a Google token and the token it links to are one line"): a void of an earlier renewal's order
/// (`GPA…..0` while Google's current order is `..1`) of the token the row holds, and a void of the token a
/// resubscription replaced (`linkedPurchaseToken`), which the row no longer holds and so reaches the lookup through
/// the night's unclaimed refunds (`UserRow.unclaimedFeedRefunds`). Google answers the line `EXPIRED`. The lookup is
/// emulated as the Google adapter does it (`GooglePlaySource.tonightsVoids`, then `GooglePlayMapping.applyingVoids`):
/// the voids the row carries and the unclaimed ones the line's keys name; one of any token or order of an over line
/// refunds it.
@Suite("Google voids naming the line's other token or an earlier order", .timeLimit(.minutes(1)))
struct GoogleVoidOtherTokenTests {
    static let renewalOrder = "GPA.1234-5678-9012-34567"
    static let resubscribedOrder = "GPA.2222-3333-4444-55555"
    static let strangerOrder = "GPA.3333-4444-5555-66666"
    static let elsewhereOrder = "GPA.4444-5555-6666-77777"

    /// The refund of `order`, as the voids feed states it.
    static func void(_ order: String) -> SeenRefund {
        SeenRefund(
            store: StoreKind.playStore.rawValue, transactionID: order, refundedAt: day(-3), amount: 4.99, currency: "USD")
    }

    /// Google's voids feed, and Google's answer for each row holding a token: the line is over, its keys the token,
    /// the token it links to and its order without the suffix; the voids the row carries that name any of them
    /// refund it (revoked at the void, keyed by the voided order).
    final class GoogleWorld: FactSource {
        let stated: [FeedRefund]
        /// Google's line per token the rows hold: the token it links to and the current order.
        let lines: [String: (linked: String?, order: String)]
        private let carried = Mutex<[String: [FeedRefundFact]]>([:])

        init(stated: [FeedRefund], lines: [String: (linked: String?, order: String)]) {
            self.stated = stated
            self.lines = lines
        }

        var feedOrigins: [FactOrigin] { [.googlePlay] }

        func feed(_ origin: FactOrigin, since: Date, until: Date) async -> FeedRead? {
            let entries = FeedEntries(identifiers: stated.map(\.identifier), entries: stated.count, refunds: stated)
            return FeedRead(
                source: .googlePlay, reason: .feed("google_void"), column: FeedColumn(.testGoogle), result: .success(entries))
        }

        func facts(for row: UserRow) async -> SourceFacts {
            guard let token = row.identifiers[.googlePlay], let line = lines[token] else {
                carried.withLock { $0[row.id] = row.feedRefunds }
                return SourceFacts(revenueCatKnowsSubscriber: false, revenueCatPurchases: [])
            }
            var purchase = PurchaseFact(
                origin: .googlePlay, productID: "premium_monthly", store: .playStore, isSandbox: false, purchaseDate: day(-40),
                expiresDate: day(-10), autoRenew: false, storeState: .expired, storeTransactionID: line.order,
                price: Money(amount: 4.99, currency: "USD"),
                line: PurchaseLine.of(store: .playStore, ids: [token, line.linked, line.order]), buyer: .unstated)
            let keys = purchase.purchaseLine?.keys ?? []
            let reached = row.feedRefunds + row.unclaimedFeedRefunds.naming(keys, store: .playStore)
            carried.withLock { $0[row.id] = reached }
            let voids = reached.filter { void in
                void.identifier.map(keys.contains) == true
                    || keys.contains(StoreKind.playStore.lineKeys(of: void.refund.transactionID)[0])
            }
            if let void = voids.max(by: { $0.refund.refundedAt < $1.refund.refundedAt }) {
                purchase.refundedAt = void.refund.refundedAt
                purchase.refundTransactionID = void.refund.transactionID
                purchase.storeState = .revoked
            }
            var facts = SourceFacts(
                revenueCatKnowsSubscriber: false, revenueCatPurchases: [], stores: [StoreFact(lookupID: token, purchase: purchase)])
            facts.asked = [.googlePlay]
            return facts
        }

        /// The voids each lookup saw: those its row carried and the unclaimed ones its line's keys name.
        var refundsCarried: [String: [FeedRefundFact]] { carried.withLock { $0 } }
    }

    static func row(_ id: String, token: String) -> UserRow {
        var row = UserRow(
            id: id, currentTier: 1, status: "active", endDate: day(-10), source: "google_iap", productID: "premium_monthly",
            autoRenew: true)
        row.identifiers[.googlePlay] = token
        return row
    }

    /// Three Google users whose line Google answers `EXPIRED`. The feed voided an earlier order of two of them:
    /// `g-renewal` by the token its row holds, `g-resub` by the token its resubscription replaced. `g-stranger`'s line
    /// links a token of its own; the feed's other void of a token no row holds (`tok-elsewhere`) names none of its keys.
    static func world(_ body: (JobFixture, GoogleWorld) async throws -> Void) async throws {
        try await JobFixture.with([:]) { world in
            world.database.insert([
                row("g-renewal", token: "tok-renewal"), row("g-resub", token: "tok-new"), row("g-stranger", token: "tok-stranger"),
            ])
            let source = GoogleWorld(
                stated: [
                    FeedRefund(identifier: "tok-renewal", refund: void(renewalOrder + "..0"), isSandbox: false),
                    FeedRefund(identifier: "tok-old", refund: void(resubscribedOrder + "..0"), isSandbox: false),
                    FeedRefund(identifier: "tok-elsewhere", refund: void(elsewhereOrder + "..0"), isSandbox: false),
                ],
                lines: [
                    "tok-renewal": (linked: nil, order: renewalOrder + "..1"),
                    "tok-new": (linked: "tok-old", order: resubscribedOrder + "..1"),
                    "tok-stranger": (linked: "tok-previous", order: strangerOrder + "..1"),
                ])
            try await body(world, source)
        }
    }

    static func run(_ world: JobFixture, _ source: GoogleWorld) async throws -> RunResult {
        var ports = JobPorts(
            candidates: world.database, catalog: world.database, journal: world.database, verdicts: world.database,
            history: world.database, feeds: world.database)
        ports.refunds = world.database
        let job = ReconcileJob(
            ports: ports, source: source, stats: RequestStats(), sourcesNote: [:],
            logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }), now: world.clock.now)
        let options = world.options {
            $0.concurrency = 1
            $0.maxDowngradeRatio = 1
        }
        return try await job.run(options, runID: "run-voids", startedAt: world.clock.now())
    }

    /// The user's status after the run, and the refunds `refunds_seen` keeps for it.
    static func outcome(_ world: JobFixture, _ user: String) async throws -> (status: String?, kept: [String]) {
        let kept = try await world.database.feedRefunds(runID: "run-voids")[user]?.map(\.transactionID) ?? []
        return (world.database.users.first { $0.id == user }?.statusText, kept)
    }

    @Test("an earlier renewal's order of the row's own token: carried, refunded, kept in refunds_seen")
    func earlierRenewalOrder() async throws {
        try await Self.world { world, source in
            _ = try await Self.run(world, source)
            #expect(source.refundsCarried["g-renewal"]?.map(\.refund.transactionID) == [Self.renewalOrder + "..0"])
            let (status, kept) = try await Self.outcome(world, "g-renewal")
            #expect(status == "refunded")
            #expect(kept == [Self.renewalOrder + "..0"])
        }
    }

    /// No row holds the replaced token (only Google's answer for the new one names it, after the feed): the feed
    /// phase hands the void to the lookups as an unclaimed refund, and the line whose keys name it (its
    /// `linkedPurchaseToken`) is refunded by it, as a lookup's refund: kept once in `refunds_seen` by its order, and
    /// counted in the finance figures (CONTRACT "Sources and the decision", "Finance figures").
    @Test("the resubscription's old token (linkedPurchaseToken): the unclaimed void reaches the user, refunded, kept, counted")
    func linkedOldToken() async throws {
        try await Self.world { world, source in
            let result = try await Self.run(world, source)
            let (status, kept) = try await Self.outcome(world, "g-resub")
            #expect(source.refundsCarried["g-resub"]?.map(\.refund.transactionID) == [Self.resubscribedOrder + "..0"])
            #expect(source.refundsCarried["g-resub"]?.first?.identifier == "tok-old")
            #expect(status == "refunded")
            #expect(kept == [Self.resubscribedOrder + "..0"])
            let refunds = try #require(result.summary.finance.buckets["play_store|USD"]).refunds
            #expect(refunds.count == 2, "g-renewal's and g-resub's")
            #expect(refunds.value == Decimal(string: "9.98"))
        }
    }

    /// An unclaimed void is a fact about the line whose keys name it, never about another: a user whose line links
    /// another token, with none of the void's orders, is not refunded by it and keeps nothing in `refunds_seen`.
    @Test("an unclaimed void naming no key of the asked user's line never refunds that user")
    func unclaimedVoidOfAnotherLine() async throws {
        try await Self.world { world, source in
            _ = try await Self.run(world, source)
            let (status, kept) = try await Self.outcome(world, "g-stranger")
            #expect(source.refundsCarried["g-stranger"] == [], "asked, and reached by no void")
            #expect(status == "expired", "ended by Google's answer alone")
            #expect(kept.isEmpty)
            let all = try await world.database.feedRefunds(runID: "run-voids").values.flatMap { $0 }.map(\.transactionID)
            #expect(!all.contains(Self.elsewhereOrder + "..0"), "a void no line named is kept for nobody")
        }
    }
}
