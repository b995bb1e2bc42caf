import Foundation
import PostgresNIO
import StoreSimulator
import SubreconApp
import SubreconCore
import SubreconDatabase
import SubreconJob
import SubreconPorts
import SubreconReports
import SubreconTestSupport
import Testing

/// Lists end as incomplete, never as complete (CONTRACT "Hostile answers and bounded work"): an incomplete feed is a failed, uncovered
/// window (exit 1 at most); an incomplete list in a lookup is that user's `fetch_error`, untouched.
@Suite("Lists end as incomplete, never as complete", .serialized, .enabled(if: Harness.isEnabled, Harness.skip))
struct IncompleteListTests {
    @Test("Apple's history repeating its paginationToken: incomplete after 2 requests, not 500; the window stays uncovered")
    func appleRepeatedToken() async throws {
        try await Harness.with(apple: true, revenueCat: false) { h in
            try await FeedWindowTests.seedRefund(h, "t-refund", txn: "7401", refundDay: -1)
            await h.history.setPageFault(.repeatToken)
            let result = try await h.run { $0.maxDowngradeRatio = 1 }
            #expect(result.exitStatus == .userErrors)
            let feed = try #require(result.summary.feeds?["app_store"])
            #expect(feed.complete == false)
            #expect(feed.error?.contains("seen before") == true)
            #expect(await h.history.requests() == 2)
            #expect(try await h.count("select count(*)::int from reconcile_feed_windows where complete") == 0)
        }
    }

    @Test("Apple's history page without hasMore: incomplete, never read as the end; the refund on page 2 is read next night")
    func applePageWithoutHasMore() async throws {
        try await Harness.with(apple: true, revenueCat: false) { h in
            await h.history.setPageSize(1)
            await h.history.add(AppleHistoryNotification(type: "REFUND", originalTransactionID: "7499", sentAt: Harness.day(-1)))
            try await FeedWindowTests.seedRefund(h, "h-refund", txn: "7402", refundDay: -1)
            await h.history.setPageFault(.omitHasMore)
            let first = try await h.run { $0.maxDowngradeRatio = 1 }
            #expect(first.exitStatus == .userErrors)
            #expect(first.summary.feeds?["app_store"]?.complete == false)
            #expect(first.summary.feeds?["app_store"]?.error?.contains("hasMore") == true)
            #expect(try await h.user("h-refund")?.currentTier == 1)
            await h.history.setPageFault(nil)
            let second = try await h.run {
                $0.asOf = Harness.day(0.5)
                $0.maxDowngradeRatio = 1
            }
            #expect(second.summary.feeds?["app_store"]?.since == ISO8601.string(Harness.day(-3)))
            #expect(try await h.user("h-refund")?.currentTier == 0)
        }
    }

    /// A `GET /v1/events` page of one event, `has_more: true`.
    static func eventPage(_ id: String) -> StripeFault {
        let body =
            #"{"object": "list", "has_more": true, "url": "/v1/events", "data": [{"id": "\#(id)", "object": "event", "#
            + #""type": "customer.subscription.updated", "created": 1780000000, "data": {"object": {"object": "subscription", "#
            + #""id": "sub_x", "customer": "cus_x", "status": "active"}}}]}"#
        return .raw(status: 200, headers: [:], body: Data(body.utf8))
    }

    @Test("Stripe events whose cursors cycle: the feed ends incomplete after 3 requests, not 1,000; exit 1")
    func stripeCursorCycle() async throws {
        try await Harness.withStripe { h, stripe in
            for _ in 0..<300 {
                await stripe.setFault(Self.eventPage("evt_a"), for: StripeSimulator.eventsKey, times: 1)
                await stripe.setFault(Self.eventPage("evt_b"), for: StripeSimulator.eventsKey, times: 1)
            }
            let result = try await h.run { $0.maxDowngradeRatio = 1 }
            #expect(result.exitStatus == .userErrors)
            let feed = try #require(result.summary.feeds?["stripe"])
            #expect(feed.complete == false && feed.error?.contains("incomplete") == true)
            #expect(await stripe.recordedRequests().filter { $0.path == "/v1/events" }.count == 3)
        }
    }

    static func twoItems(_ id: String) -> SimulatedStripeSubscription {
        SimulatedStripeSubscription(
            id: id, status: "active", livemode: true, currentPeriodStart: Harness.day(-5), currentPeriodEnd: Harness.day(25),
            items: [
                SimulatedStripeItem(id: "si_\(id)_basic", priceID: "price_basic_month", productID: "prod_basic"),
                SimulatedStripeItem(id: "si_\(id)_pro", priceID: "price_pro_annual", productID: nil, unitAmount: 9_999),
            ])
    }

    @Test("items.has_more: the tier is decided with every item (pro stays pro), or the user is fetch_error, untouched")
    func stripeItemsHaveMore() async throws {
        try await Harness.withStripe { h, stripe in
            // Both rows hold pro with a lapsed end date: candidates. Stripe embeds only the basic item of each.
            try await h.db.insertUsers([
                StripeWorld.row("i-pro", tier: 2, "active", end: -1, customer: "cus_ipro", product: "price_pro_annual"),
                StripeWorld.row("i-err", tier: 2, "active", end: -1, customer: "cus_ierr", product: "price_pro_annual"),
            ])
            await stripe.setSubscriptions([Self.twoItems("sub_ipro")], forCustomer: "cus_ipro")
            await stripe.setSubscriptions([Self.twoItems("sub_ierr")], forCustomer: "cus_ierr")
            await stripe.setEmbeddedItemLimit(1)
            await stripe.setFault(.status(500), for: StripeSimulator.itemsKey(subscription: "sub_ierr"))
            let result = try await h.run { $0.maxDowngradeRatio = 1 }
            let rows = try h.report(result)
            let pro = try #require(try await h.user("i-pro"))
            #expect(pro.currentTier == 2 && pro.endDate == Harness.day(25), "judged with both items: still pro, renewed")
            #expect(rows["i-pro"]?.drift.contains("fetch_error") == false)
            let failed = try #require(try await h.user("i-err"))
            #expect(failed.currentTier == 2 && failed.endDate == Harness.day(-1), "untouched")
            #expect(rows["i-err"]?.drift == ["fetch_error"])
            #expect(result.exitStatus == .userErrors)
        }
    }
}
