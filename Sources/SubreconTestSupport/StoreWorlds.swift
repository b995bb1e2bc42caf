import Foundation
import StoreSimulator
import SubreconCore
import SubreconTestWorld

/// Stripe in a job world: its key, the products its tests map, its rows and subscriptions, and a world with the
/// Stripe simulator configured (RevenueCat off unless asked).
public enum StripeWorld {
    public static let key = "sk_test_StripeJobKey0123456789"
    public static let products: [ProductCatalog.Entry] = [
        .init(productID: "prod_basic", tier: 1),
        .init(productID: "price_pro_annual", tier: 2),
    ]

    /// The variables that configure the Stripe simulator on the world's loopback server.
    public static var environment: [String: String] { ["STRIPE_API_KEY": key, "STRIPE_BASE_URL": "{base}"] }

    public static func with(
        _ backend: WorldBackend, revenueCat: Bool = false, extra: [String: String] = [:],
        _ body: (JobWorld, StripeSimulator) async throws -> Void
    ) async throws {
        let stripe = StripeSimulator(apiKey: key)
        try await JobWorld.with(backend, revenueCat: revenueCat, routes: [stripe], extra: environment.merging(extra) { $1 }) { h in
            try await h.db.upsertProducts(products)
            try await body(h, stripe)
        }
    }

    /// RevenueCat says `user` holds Stripe subscription `subscription` of `prod_basic`, bought yesterday, running to day 29.
    public static func revenueCatSaysActive(_ h: JobWorld, user: String, subscription: String) async {
        await h.revenueCat.setSubscriber(
            SimulatedSubscriber(
                firstSeen: JobWorld.day(-300),
                subscriptions: [
                    SimulatedSubscription(
                        productID: "prod_basic", store: "stripe", purchaseDate: JobWorld.day(-1), expiresDate: JobWorld.day(29),
                        storeTransactionID: subscription)
                ]), for: user)
    }

    public static func row(_ id: String, tier: Int, _ status: String, end: Double, customer: String?, product: String = "prod_basic")
        -> UserRow
    {
        UserRow(
            id: id, currentTier: tier, status: status, endDate: JobWorld.day(end), source: "stripe", productID: product,
            autoRenew: true, identifiers: [.stripe: customer].compactMapValues { $0 })
    }

    /// A user whose row lapsed yesterday (a candidate) and a subscription in its current period (started yesterday)
    /// whose latest invoice was paid by `pi_<name>` with `charge`; the charge is served by
    /// `GET /v1/charges?payment_intent=`. `insert` writes the row (a world's database, or a PostgreSQL one).
    public static func seedRefundable(
        _ insert: ([UserRow]) async throws -> Void, _ stripe: StripeSimulator, _ name: String, amount: Int64, currency: String = "usd",
        refunded: Int64, refunds: [SimulatedStripeRefund]?, status: String = "active"
    ) async throws {
        try await insert([row("r-\(name)", tier: 1, "active", end: -1, customer: "cus_\(name)")])
        var subscription = subscription("sub_\(name)", status, from: -1, to: 29, amount: amount, currency: currency)
        subscription.latestInvoice = .paid(
            id: "in_\(name)", amount: amount, currency: currency, paymentIntent: "pi_\(name)", created: JobWorld.day(-1))
        await stripe.setSubscriptions([subscription], forCustomer: "cus_\(name)")
        await stripe.addCharges([
            SimulatedStripeCharge(
                id: "ch_\(name)", paymentIntentID: "pi_\(name)", amount: amount, amountRefunded: refunded, currency: currency,
                created: JobWorld.day(-1), refunds: refunds)
        ])
    }

    public static func subscription(
        _ id: String, _ status: String, from start: Double, to end: Double, product: String? = "prod_basic",
        price: String = "price_basic_month", livemode: Bool? = true, cancelAtPeriodEnd: Bool = false, endedAt: Double? = nil,
        amount: Int64 = 999, currency: String = "usd"
    ) -> SimulatedStripeSubscription {
        SimulatedStripeSubscription(
            id: id, status: status, livemode: livemode, cancelAtPeriodEnd: cancelAtPeriodEnd, endedAt: endedAt.map(JobWorld.day),
            currentPeriodStart: JobWorld.day(start), currentPeriodEnd: JobWorld.day(end),
            items: [
                SimulatedStripeItem(id: "si_\(id.dropFirst(4))", priceID: price, productID: product, unitAmount: amount, currency: currency)
            ])
    }
}

/// Google Play in a job world. The service account key's `token_uri` is `{base}/token`: the world replaces `{base}`
/// in every extra variable (the key text included) with its loopback server, which serves the simulator.
public enum GoogleWorld {
    public static let package = "com.example.app"

    public static func environment(_ account: GoogleTestServiceAccount) -> [String: String] {
        [
            "GOOGLE_PLAY_SERVICE_ACCOUNT": account.json, "GOOGLE_PLAY_PACKAGE_NAME": package,
            "GOOGLE_PLAY_BASE_URL": "{base}",
        ]
    }

    /// A world with the Google Play simulator configured, RevenueCat beside it only when asked.
    public static func with(
        _ backend: WorldBackend, revenueCat: Bool = false, _ body: (JobWorld, GooglePlaySimulator) async throws -> Void
    ) async throws {
        let account = try GoogleTestServiceAccount.generate(tokenURI: "{base}/token")
        let google = GooglePlaySimulator(account: account, packageName: package)
        try await JobWorld.with(backend, revenueCat: revenueCat, routes: [google], extra: environment(account)) { h in
            try await body(h, google)
        }
    }

    /// A Google Play row: tier 1 `premium_monthly` ending `end` days from T, holding `token`.
    public static func row(_ id: String, end: Double, status: String = "active", token: String? = nil) -> UserRow {
        UserRow(
            id: id, currentTier: 1, status: status, endDate: JobWorld.day(end), source: "google_iap", productID: "premium_monthly",
            autoRenew: true, identifiers: [.googlePlay: token ?? "tok-" + id].compactMapValues { $0 })
    }

    public static func play(_ state: String, expiry: Double, start: Double = -30, test: Bool = false) -> SimulatedPlaySubscription {
        .single(
            "SUBSCRIPTION_STATE_" + state, product: "premium_monthly", start: JobWorld.day(start), expiry: JobWorld.day(expiry),
            autoRenew: state == "CANCELED" ? false : true, testPurchase: test)
    }

    /// A Play subscription line of `premium_monthly` in `state` whose latest order is `order`.
    public static func line(_ state: String, start: Double, expiry: Double, order: String) -> SimulatedPlaySubscription {
        .single(
            "SUBSCRIPTION_STATE_" + state, product: "premium_monthly", start: JobWorld.day(start), expiry: JobWorld.day(expiry),
            autoRenew: state == "ACTIVE", orderID: order)
    }

    /// RevenueCat's entry for a Play subscription of `premium_monthly`, naming `order` as its transaction.
    public static func revenueCat(purchased: Double, expires: Double, order: String?) -> SimulatedSubscriber {
        SimulatedSubscriber(
            firstSeen: JobWorld.day(-300),
            subscriptions: [
                SimulatedSubscription(
                    productID: "premium_monthly", store: "play_store", purchaseDate: JobWorld.day(purchased),
                    expiresDate: JobWorld.day(expires), storeTransactionID: order)
            ])
    }
}

/// The App Store in a job world.
public enum AppleWorld {
    /// An active `premium_monthly` line `otid` (transaction `otid + "1"`) bought yesterday for 30 days, naming `account`
    /// as its buyer when given.
    public static func active(_ otid: String, account: String?) -> AppStoreScenario {
        var scenario = AppStoreScenario(
            originalTransactionID: otid, transactionID: otid + "1", productID: "premium_monthly", status: 1,
            purchaseDate: JobWorld.day(-1), expiresDate: JobWorld.day(29))
        scenario.appAccountToken = account
        return scenario
    }
}

/// RevenueCat in a job world: answers written by hand.
public enum RevenueCatWorld {
    public static func iso(_ days: Double) -> String { ISO8601.string(JobWorld.day(days)) }

    /// A RevenueCat v1 answer written by hand, so fields can be left out as a buggy or busy RevenueCat would.
    public static func subscriberBody(entitlements: String = "{}", subscriptions: String = "{}", nonSubscriptions: String = "{}") -> Data {
        Data(
            """
            {"request_date": "\(iso(0))", "request_date_ms": \(Int64(JobWorld.asOf.timeIntervalSince1970 * 1000)),
             "subscriber": {"original_app_user_id": "x", "first_seen": "\(iso(-300))", "last_seen": "\(iso(-1))",
               "management_url": null, "original_application_version": null, "original_purchase_date": null,
               "other_purchases": {}, "subscriber_attributes": {},
               "entitlements": \(entitlements), "subscriptions": \(subscriptions), "non_subscriptions": \(nonSubscriptions)}}
            """.utf8)
    }
}
