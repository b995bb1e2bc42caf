import Foundation
import StoreSimulator
import SubreconApp
import SubreconCore
import SubreconJob
import SubreconPorts
import SubreconTestSupport
import Testing

/// The store adapters' side of CONTRACT "Whose purchase it is": a purchase linked to the user tonight (`UserRow.links`) is asked about
/// besides the row's own identifier, the facts carry the buyer's account the store states, and Stripe's inventory
/// comes back as a feed read of customers with their stated purchases.
@Suite("Store adapters: tonight's links, stated accounts, the Stripe inventory", .serialized, .enabled(if: Harness.isEnabled, Harness.skip))
struct StoreLinkAdapterTests {
    static func source(_ h: Harness, _ body: (StoreFactSource) async throws -> Void) async throws {
        let config = try SubreconConfiguration.load(h.env, requireSource: true)
        try await HTTPClientScope.with { http in
            try await body(try StoreFactSource(configuration: config, httpClient: http, stats: RequestStats(), logger: h.logger))
        }
    }

    @Test("Stripe asks the linked customer when the row holds none, and both when the row holds another")
    func stripeLinks() async throws {
        try await Harness.withStripe { h, stripe in
            var linked = StripeWorld.subscription("sub_linked", "active", from: -2, to: 28)
            linked.metadata = ["user_id": "s-owner"]
            await stripe.setSubscriptions([linked], forCustomer: "cus_linked")
            await stripe.setSubscriptions([StripeWorld.subscription("sub_own", "active", from: -2, to: 28)], forCustomer: "cus_own")
            try await Self.source(h) { source in
                var bare = StripeWorld.row("s-owner", tier: 0, "expired", end: -40, customer: nil)
                bare.links[.stripe] = "cus_linked"
                let facts = await source.facts(for: bare)
                #expect(facts.stores.map(\.purchase.storeTransactionID) == ["sub_linked"])
                #expect(facts.stores.map(\.purchase.accountToken) == ["s-owner"])
                var other = StripeWorld.row("s-other", tier: 1, "active", end: -1, customer: "cus_own")
                other.links[.stripe] = "cus_linked"
                let both = await source.facts(for: other)
                #expect(Set(both.stores.compactMap(\.purchase.storeTransactionID)) == ["sub_own", "sub_linked"])
                var same = other
                same.links[.stripe] = "cus_own"
                _ = await source.facts(for: same)
            }
            // The subscription lists asked, in order: a link equal to the row's own customer is asked once.
            let lists = await stripe.recordedRequests().filter { $0.path.hasSuffix("/v1/subscriptions") }
            #expect(lists.compactMap { $0.query["customer"] } == ["cus_linked", "cus_own", "cus_linked", "cus_own"])
        }
    }

    @Test("Stripe's inventory is a feed read of customers with their stated purchases; a failed page fails it whole")
    func stripeInventory() async throws {
        try await Harness.withStripe { h, stripe in
            var owned = StripeWorld.subscription("sub_i1", "active", from: -2, to: 28)
            owned.metadata = ["user_id": "s-1"]
            await stripe.setSubscriptions([owned], forCustomer: "cus_i1")
            await stripe.setSubscriptions([StripeWorld.subscription("sub_i2", "trialing", from: -2, to: 5)], forCustomer: "cus_i2")
            await stripe.setCustomerMetadata(["user_id": "s-2"], forCustomer: "cus_i2")
            await stripe.setSubscriptions([StripeWorld.subscription("sub_i3", "canceled", from: -60, to: -30)], forCustomer: "cus_i3")
            try await Self.source(h) { source in
                #expect(source.inventoryOrigins == [.stripe])
                let read = try #require(await source.inventory(.stripe))
                #expect(read.reason == CandidateReason.feed("stripe_inventory"))
                let entries = try read.result.get()
                #expect(entries.identifiers == ["cus_i1", "cus_i2"])
                #expect(entries.entries == 2)
                #expect(entries.purchases.map(\.origin) == [.stripe, .stripe])
                #expect(entries.purchases.map(\.identifier) == ["cus_i1", "cus_i2"])
                #expect(entries.purchases.map(\.purchase.accountToken) == ["s-1", "s-2"])
                await stripe.setFault(.normal, for: StripeSimulator.inventoryKey, times: 1)
                await stripe.setFault(.malformedBody, for: StripeSimulator.inventoryKey, times: 1)
                let failed = try #require(await source.inventory(.stripe))
                guard case .failure = failed.result else {
                    Issue.record("a malformed page was used")
                    return
                }
            }
        }
    }

    @Test("Google asks the linked token besides the row's, and states the account Google names")
    func googleLinks() async throws {
        try await GoogleHarness.with { h, google in
            var linked = GoogleWorld.play("ACTIVE", expiry: 20)
            linked.obfuscatedAccountID = "g-owner"
            await google.setPurchase(linked, token: "tok-linked")
            await google.setPurchase(GoogleWorld.play("EXPIRED", expiry: -3), token: "tok-own")
            try await Self.source(h) { source in
                var row = GoogleWorld.row("g-owner", end: -3, token: "tok-own")
                row.links[.googlePlay] = "tok-linked"
                let facts = await source.facts(for: row)
                #expect(facts.errors.isEmpty)
                #expect(Set(facts.stores.map(\.lookupID)) == ["tok-own", "tok-linked"])
                #expect(facts.stores.first { $0.lookupID == "tok-linked" }?.purchase.accountToken == "g-owner")
                #expect(facts.stores.first { $0.lookupID == "tok-own" }?.purchase.accountToken == nil)
            }
        }
    }

    @Test("Apple asks the linked original transaction besides the row's, and states the signed appAccountToken")
    func appleLinks() async throws {
        try await Harness.with(apple: true, revenueCat: false) { h in
            var linked = AppStoreScenario(
                originalTransactionID: "7701", productID: "premium_monthly", status: 1, purchaseDate: Harness.day(-3),
                expiresDate: Harness.day(27))
            linked.appAccountToken = "7e3fb20b-4cdb-47cc-936d-99d65f608138"
            await h.appStore.setScenario(linked)
            await h.appStore.setScenario(
                AppStoreScenario(
                    originalTransactionID: "7700", productID: "premium_monthly", status: 2, purchaseDate: Harness.day(-40),
                    expiresDate: Harness.day(-10)))
            try await Self.source(h) { source in
                var bare = h.row("a-bare", tier: 0, "expired", end: -10)
                bare.links[.appStore] = "7701"
                let alone = await source.facts(for: bare)
                #expect(alone.errors.isEmpty)
                #expect(alone.stores.map(\.purchase.originalTransactionID) == ["7701"])
                #expect(alone.stores.map(\.purchase.accountToken) == ["7e3fb20b-4cdb-47cc-936d-99d65f608138"])
                var other = h.row("a-other", tier: 0, "expired", end: -10, txn: "7700")
                other.links[.appStore] = "7701"
                let both = await source.facts(for: other)
                #expect(both.errors.isEmpty)
                #expect(Set(both.stores.compactMap(\.purchase.originalTransactionID)) == ["7700", "7701"])
            }
        }
    }
}

/// The refunds of earlier nights as the Google adapter reads them: scripted, or failing.
struct ScriptedRefundsSeen: RefundsSeenLookup {
    var refunds: [SeenRefund] = []
    var fails = false

    func refundsSeen(userID: String, store: String, limit: Int) async throws -> [SeenRefund] {
        if fails { throw CancellationError() }
        return refunds.filter { $0.store == store }
    }
}

@Suite("Google Play: the voids of earlier nights", .serialized, .enabled(if: Harness.isEnabled, Harness.skip))
struct GoogleEarlierVoidTests {
    @Test("a kept void of the line refunds a line Google says is over, never a live one; an unreadable store is an error")
    func earlierVoids() async throws {
        try await GoogleOverRevenueCatTests.withGoogleAndRevenueCat { h, google in
            let order = "GPA.3200-0000-0000-00001..1"
            await google.setPurchase(
                GoogleWorld.line("EXPIRED", start: -60, expiry: -1, order: order), token: "tok-ev-over")
            await google.setPurchase(
                GoogleWorld.line("ACTIVE", start: -1, expiry: 29, order: "GPA.3200-0000-0000-00002..0"), token: "tok-ev-live")
            let kept = SeenRefund(store: "play_store", transactionID: order, refundedAt: Harness.day(-3), amount: nil, currency: nil)
            let config = try SubreconConfiguration.load(h.env, requireSource: true)
            try await HTTPClientScope.with { http in
                func source(_ lookup: ScriptedRefundsSeen) throws -> StoreFactSource {
                    try StoreFactSource(
                        configuration: config, httpClient: http, stats: RequestStats(), logger: h.logger, refundsSeen: lookup)
                }
                let over = GoogleWorld.row("ev-over", end: -1)
                let refunded = try await source(ScriptedRefundsSeen(refunds: [kept])).facts(for: over)
                let google = refunded.stores.filter { $0.purchase.origin == .googlePlay }
                #expect(google.map(\.purchase.refundedAt) == [Harness.day(-3)] && refunded.errors.isEmpty, "\(refunded)")
                // A kept void of another order never touches a live line.
                let live = try await source(ScriptedRefundsSeen(refunds: [kept])).facts(for: GoogleWorld.row("ev-live", end: -1))
                #expect(live.stores.filter { $0.purchase.origin == .googlePlay }.allSatisfy { $0.purchase.refundedAt == nil })
                let failing = try await source(ScriptedRefundsSeen(fails: true)).facts(for: over)
                #expect(failing.errors.contains { $0.origin == .googlePlay && $0.message.contains("earlier nights") }, "\(failing.errors)")
            }
        }
    }
}
