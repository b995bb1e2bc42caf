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

/// Refunds seen only in a store feed are kept in `refunds_seen` like those a lookup states (CONTRACT "Finance figures"): one
/// row per store transaction, for the shard's users, never in a dry run, never a sandbox refund in a production run.
@Suite("Refunds the store feeds state, kept in refunds_seen", .serialized, .enabled(if: Harness.isEnabled, Harness.skip))
struct FeedRefundTests {
    /// A harness with Apple (and its notification history), Google Play and Stripe; RevenueCat off.
    static func withAllStores(_ body: (Harness, GooglePlaySimulator, StripeSimulator) async throws -> Void) async throws {
        let account = try GoogleTestServiceAccount.generate(tokenURI: "{base}/token")
        let google = GooglePlaySimulator(account: account, packageName: GoogleWorld.package)
        let stripe = StripeSimulator(apiKey: StripeWorld.key)
        var extra = GoogleWorld.environment(account)
        extra.merge(["STRIPE_API_KEY": StripeWorld.key, "STRIPE_BASE_URL": "{base}"]) { $1 }
        try await Harness.with(apple: true, revenueCat: false, routes: [google, stripe], extra: extra) { h in
            try await h.db.catalog.upsertProducts(StripeWorld.products)
            try await body(h, google, stripe)
        }
    }

    /// Rows kept in `refunds_seen` with exactly these values.
    static func kept(
        _ h: Harness, store: String, id: String, user: String, at: Date, amount: String?, currency: String?
    ) async throws -> Int {
        if let amount, let currency {
            return try await h.count(
                """
                select count(*)::int from refunds_seen where store = \(store) and transaction_id = \(id) and user_id = \(user) \
                and refunded_at = \(at) and amount = \(amount) and currency = \(currency)
                """)
        }
        return try await h.count(
            """
            select count(*)::int from refunds_seen where store = \(store) and transaction_id = \(id) and user_id = \(user) \
            and refunded_at = \(at) and amount is null and currency is null
            """)
    }

    static func window(_ options: inout RunOptions) {
        options.maxDowngradeRatio = 1
        // Every run reads the same window, so the rerun reads the same feeds again.
        options.feedsSince = Harness.day(-3)
    }

    @Test(
        "three refunds seen only in Apple's history, Google's voids and Stripe's events: kept once each, the user on the review list; dry run and rerun add nothing, a sandbox refund is not kept"
    )
    func feedOnlyRefunds() async throws {
        try await Self.withAllStores { h, google, stripe in
            // Every lookup now shows a healthy subscription: the refunds are only in the feeds.
            try await h.db.insertUsers([
                UserRow(
                    id: "r-three", currentTier: 1, status: "active", endDate: Harness.day(300), source: "apple_iap",
                    productID: "premium_monthly", originalTransactionID: "o-three", autoRenew: true,
                    identifiers: [.stripe: "cus_three", .googlePlay: "tok-three"].compactMapValues { $0 })
            ])
            await h.appStore.setScenario(
                AppStoreScenario(
                    originalTransactionID: "o-three", transactionID: "t-three-now", productID: "premium_monthly", status: 1,
                    purchaseDate: Harness.day(-5), expiresDate: Harness.day(300)))
            await google.setPurchase(GoogleWorld.play("ACTIVE", expiry: 300, start: -5), token: "tok-three")
            await stripe.setSubscriptions(
                [StripeWorld.subscription("sub_three", "active", from: -5, to: 300)], forCustomer: "cus_three")

            await h.history.add(
                AppleHistoryNotification(
                    type: "REFUND", originalTransactionID: "o-three", sentAt: Harness.day(-1), transactionID: "t-three-old",
                    revocationDate: Harness.day(-1), price: 9_990, currency: "USD"))
            // A renewal names the user too, but states no refund.
            await h.history.add(AppleHistoryNotification(type: "DID_RENEW", originalTransactionID: "o-three", sentAt: Harness.day(-0.5)))
            await google.addVoided(
                SimulatedVoidedPurchase(purchaseToken: "tok-three", orderID: "GPA.three..1", voidedTime: Harness.day(-1.5)))
            await stripe.setEvents([
                SimulatedStripeEvent(
                    id: "evt_three", type: "charge.refunded", created: Harness.day(-2), customer: "cus_three", amountRefunded: 1_200,
                    currency: "jpy", paymentIntent: "pi_three", refundCreated: Harness.day(-2.1)),
                // A test-mode charge in a production run: read, never kept.
                SimulatedStripeEvent(
                    id: "evt_sandbox", type: "charge.refunded", created: Harness.day(-1.8), customer: "cus_three", livemode: false,
                    paymentIntent: "pi_sandbox"),
                // A partial refund is not a refunded purchase.
                SimulatedStripeEvent(
                    id: "evt_partial", type: "charge.refunded", created: Harness.day(-1.7), customer: "cus_three", refunded: false,
                    amountRefunded: 100, paymentIntent: "pi_partial"),
            ])

            // A dry run reads the feeds and counts their refunds, and keeps none.
            let dry = try await h.run {
                Self.window(&$0)
                $0.dryRun = true
            }
            #expect(try await h.count("select count(*)::int from refunds_seen") == 0)
            #expect(dry.summary.refundReview?.newRefunds == 0)
            #expect(dry.summary.refundReview?.users == 0)
            #expect(dry.summary.feeds?["app_store"]?.refunds == 1 && dry.summary.feeds?["app_store"]?.refundsNew == 0)
            #expect(dry.summary.feeds?["stripe"]?.refunds == 2 && dry.summary.feeds?["stripe"]?.refundsNew == 0)

            let result = try await h.run(Self.window)
            for (name, feed) in result.summary.feeds ?? [:] { #expect(feed.error == nil, "\(name)") }
            #expect(try await h.count("select count(*)::int from refunds_seen") == 3)
            #expect(
                try await Self.kept(
                    h, store: "app_store", id: "t-three-old", user: "r-three", at: Harness.day(-1), amount: "9.99", currency: "USD") == 1)
            #expect(
                try await Self.kept(
                    h, store: "play_store", id: "GPA.three..1", user: "r-three", at: Harness.day(-1.5), amount: nil, currency: nil)
                    == 1, "Google's voided list states no price")
            #expect(
                try await Self.kept(
                    h, store: "stripe", id: "pi_three", user: "r-three", at: Harness.day(-2.1), amount: "1200", currency: "JPY") == 1)
            #expect(try await h.count("select count(*)::int from refunds_seen where transaction_id in ('pi_sandbox', 'pi_partial')") == 0)

            let feeds = try #require(result.summary.feeds)
            #expect(feeds["app_store"]?.refunds == 1 && feeds["app_store"]?.refundsNew == 1)
            #expect(feeds["google_play"]?.refunds == 1 && feeds["google_play"]?.refundsNew == 1)
            #expect(feeds["stripe"]?.refunds == 2 && feeds["stripe"]?.refundsNew == 1, "the sandbox refund is stated, not kept")
            #expect(result.summary.refundReview?.newRefunds == 3)
            #expect(result.summary.refundReview?.users == 1)
            let review = try h.csvLines(result, "refund_review.csv")
            #expect(
                review == [
                    RefundReviewCSV.columns.joined(separator: ","),
                    "r-three,3,app_store;play_store;stripe,\(ISO8601.string(Harness.day(-2.1))),\(ISO8601.string(Harness.day(-1)))",
                ])
            let json = try JSONSerialization.jsonObject(with: Data(contentsOf: result.folder.appendingPathComponent("summary.json")))
            let stripeLine = ((json as? [String: Any])?["feeds"] as? [String: Any])?["stripe"] as? [String: Any]
            #expect(stripeLine?["refunds"] as? Int == 2 && stripeLine?["refunds_new"] as? Int == 1)

            // The same night again: the same refunds, nothing new.
            let again = try await h.run(Self.window)
            #expect(try await h.count("select count(*)::int from refunds_seen") == 3)
            #expect(again.summary.refundReview?.newRefunds == 0)
            #expect(again.summary.refundReview?.users == 1)
            #expect((again.summary.feeds ?? [:]).values.allSatisfy { $0.refundsNew == 0 })
            #expect(again.summary.feeds?["google_play"]?.refunds == 1)
        }
    }

    @Test("a refund seen in Apple's history and in Apple's answer for the same transaction is one row, at the same amount")
    func feedAndLookupAgree() async throws {
        try await Harness.with(apple: true, revenueCat: false) { h in
            try await h.db.insertUsers([h.row("both", tier: 1, "active", end: 300, txn: "o-both")])
            // The lookup states the refund (status 5, revoked) as the feed does, each priced from the transaction.
            await h.appStore.setScenario(
                AppStoreScenario(
                    originalTransactionID: "o-both", transactionID: "t-both", productID: "premium_monthly", status: 5,
                    purchaseDate: Harness.day(-60), expiresDate: Harness.day(300), revocationDate: Harness.day(-1),
                    revocationReason: 0, price: 9_990, currency: "USD"))
            await h.history.add(
                AppleHistoryNotification(
                    type: "REFUND", originalTransactionID: "o-both", sentAt: Harness.day(-1), transactionID: "t-both",
                    revocationDate: Harness.day(-1), price: 9_990, currency: "USD"))
            let result = try await h.run(Self.window)
            #expect(try h.report(result)["both"]?.action == "downgrade")
            #expect(result.summary.feeds?["app_store"]?.refundsNew == 1)
            #expect(result.summary.refundReview?.newRefunds == 1, "the lookup's refund is the feed's row")
            #expect(try await h.count("select count(*)::int from refunds_seen") == 1)
            #expect(
                try await Self.kept(h, store: "app_store", id: "t-both", user: "both", at: Harness.day(-1), amount: "9.99", currency: "USD")
                    == 1)
        }
    }

    @Test("a Stripe refund in a charge.refunded event and in the Stripe lookup's latest invoice is one row, at the same amount")
    func stripeFeedAndLookupAgree() async throws {
        try await Harness.withStripe { h, stripe in
            try await StripeWorld.seedRefundable(
                h.db.insertUsers, stripe, "both", amount: 1200, currency: "jpy", refunded: 1200,
                refunds: [SimulatedStripeRefund(id: "re_both", amount: 1200, created: Harness.day(-0.5))])
            await stripe.setEvents([
                SimulatedStripeEvent(
                    id: "evt_both", type: "charge.refunded", created: Harness.day(-0.4), customer: "cus_both", objectID: "ch_both",
                    amountRefunded: 1200, currency: "jpy", paymentIntent: "pi_both", refundCreated: Harness.day(-0.5))
            ])
            let result = try await h.run(Self.window)
            #expect(try h.report(result)["r-both"]?.truthStatus == "refunded", "the lookup states the refund too")
            #expect(result.summary.feeds?["stripe"]?.refundsNew == 1)
            #expect(result.summary.refundReview?.newRefunds == 1, "the lookup's refund is the feed's row")
            #expect(try await h.count("select count(*)::int from refunds_seen") == 1)
            #expect(
                try await Self.kept(
                    h, store: "stripe", id: "pi_both", user: "r-both", at: Harness.day(-0.5), amount: "1200", currency: "JPY") == 1)
        }
    }

    @Test("a feed's refund is kept only for a user of the run's shard")
    func shard() async throws {
        try await Harness.with(apple: true, revenueCat: false) { h in
            let shard = ShardSpec(index: 0, count: 2)
            let names = (0..<40).map { "sh-\($0)" }
            let inside = try #require(names.first { shard.contains($0) })
            let outside = try #require(names.first { !shard.contains($0) })
            for (n, id) in [inside, outside].enumerated() {
                try await h.db.insertUsers([h.row(id, tier: 1, "active", end: 300, txn: "o-\(id)")])
                await h.appStore.setScenario(
                    AppStoreScenario(
                        originalTransactionID: "o-\(id)", transactionID: "now-\(id)", productID: "premium_monthly", status: 1,
                        purchaseDate: Harness.day(-5), expiresDate: Harness.day(300)))
                await h.history.add(
                    AppleHistoryNotification(
                        type: "REFUND", originalTransactionID: "o-\(id)", sentAt: Harness.day(-1), transactionID: "t-\(id)",
                        revocationDate: Harness.day(-1 - Double(n)), price: 4_990, currency: "USD"))
            }
            let result = try await h.run {
                Self.window(&$0)
                $0.shard = shard
            }
            #expect(result.summary.feeds?["app_store"]?.refunds == 2)
            #expect(result.summary.feeds?["app_store"]?.refundsNew == 1)
            #expect(result.summary.refundReview?.newRefunds == 1)
            #expect(try await h.count("select count(*)::int from refunds_seen") == 1)
            #expect(
                try await h.count("select count(*)::int from refunds_seen where user_id = \(inside) and transaction_id = \("t-\(inside)")")
                    == 1)
        }
    }

    @Test("a failing feed keeps no refund")
    func failingFeed() async throws {
        try await Harness.with(apple: true, revenueCat: false) { h in
            try await h.db.insertUsers([h.row("ff-1", tier: 1, "active", end: 300, txn: "o-ff-1")])
            await h.history.add(
                AppleHistoryNotification(
                    type: "REFUND", originalTransactionID: "o-ff-1", sentAt: Harness.day(-1), transactionID: "t-ff-1",
                    revocationDate: Harness.day(-1), price: 4_990, currency: "USD"))
            await h.history.failNext(status: 500, times: 1_000)
            let result = try await h.run(Self.window)
            #expect(result.summary.feeds?["app_store"]?.error != nil)
            #expect(result.summary.feeds?["app_store"]?.refunds == 0)
            #expect(result.summary.refundReview?.newRefunds == 0)
            #expect(try await h.count("select count(*)::int from refunds_seen") == 0)
        }
    }
}
