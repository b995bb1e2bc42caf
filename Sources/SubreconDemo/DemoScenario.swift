import Foundation
import StoreSimulator
import SubreconCore
import SubreconDatabase
import SubreconPorts

/// The demo's sample users: one or more per drift kind, with what each source says about them.
struct DemoUser {
    var row: UserRow
    var subscriber: SimulatedSubscriber?
    var revenueCatFault: (fault: RevenueCatFault, times: Int?)?
    var apple: [AppStoreScenario] = []
    var appleFault: (transactionID: String, fault: AppStoreFault)?
    /// A legacy receipt stored in `apple_receipts` and known to the simulator's `verifyReceipt`.
    var receipt: AppleReceiptScenario?
    /// Apple's notification history entries naming this user's original transaction id (the App Store feed).
    var notifications: [AppleHistoryNotification] = []
    /// What Stripe lists for the row's `stripe_customer_id`.
    var stripe: [SimulatedStripeSubscription] = []
    /// What Google Play answers for the row's `google_purchase_token`.
    var google: SimulatedPlaySubscription?
    /// Google Play's voided purchases naming the row's token (the Google Play feed).
    var voided: [SimulatedVoidedPurchase] = []
    /// Stripe events naming the row's customer (the Stripe feed).
    var stripeEvents: [SimulatedStripeEvent] = []
    /// The charges (and their refunds) paying the latest invoices of `stripe`'s subscriptions.
    var stripeCharges: [SimulatedStripeCharge] = []
    /// The Stripe customer of `stripe` when the row names none (a subscriber the database never recorded).
    var stripeCustomer: String?
    /// Google Play purchases of tokens the row does not hold (a newer token of its line).
    var googleTokens: [String: SimulatedPlaySubscription] = [:]
    /// What the demo shows with this user.
    var shows: String
    /// Folded with its kind into one line of the story (the ordinary renewals).
    var folded = false

    init(
        row: UserRow, subscriber: SimulatedSubscriber? = nil, revenueCatFault: (fault: RevenueCatFault, times: Int?)? = nil,
        apple: [AppStoreScenario] = [], appleFault: (transactionID: String, fault: AppStoreFault)? = nil,
        receipt: AppleReceiptScenario? = nil, notifications: [AppleHistoryNotification] = [],
        stripe: [SimulatedStripeSubscription] = [], google: SimulatedPlaySubscription? = nil, voided: [SimulatedVoidedPurchase] = [],
        stripeEvents: [SimulatedStripeEvent] = [], stripeCharges: [SimulatedStripeCharge] = [], shows: String,
        folded: Bool = false
    ) {
        self.stripeEvents = stripeEvents
        self.stripeCharges = stripeCharges
        self.row = row
        self.subscriber = subscriber
        self.revenueCatFault = revenueCatFault
        self.apple = apple
        self.appleFault = appleFault
        self.receipt = receipt
        self.notifications = notifications
        self.stripe = stripe
        self.google = google
        self.voided = voided
        self.shows = shows
        self.folded = folded
    }
}

enum DemoScenario {
    static let bundleID = "com.example.subrecon.demo"
    static let sharedSecret = "demo0shared0secret"

    static let products: [ProductCatalog.Entry] = [
        .init(productID: "premium_monthly", tier: 1, entitlement: "premium"),
        .init(productID: "premium_annual", tier: 1, entitlement: "premium"),
        .init(productID: "pro_monthly", tier: 2, entitlement: "pro"),
        .init(productID: "pro_annual", tier: 2, entitlement: "pro"),
        .init(productID: "pro_lifetime", tier: 2, entitlement: "pro"),
        .init(productID: "gp_premium", tier: 1, entitlement: "premium"),
        .init(productID: "stripe_pro", tier: 2, entitlement: "pro"),
        // Stripe maps by its own product id (`prod_…`, CONTRACT "Sources and the decision").
        .init(productID: "prod_web_premium", tier: 1, entitlement: "premium"),
        .init(productID: "prod_web_pro", tier: 2, entitlement: "pro"),
    ]

    /// The Android package the Google Play simulator serves.
    static let packageName = "com.example.subrecon.demo"
    /// The rolling sweep's period the demo runs with (`RunOptions`' default, as `subrecon run` has it).
    static let sweepDays = 30

    /// The id of the user the sweep catches on the night of `asOf`: the first `demo-40-sweep-N` whose sweep bucket
    /// (CONTRACT "Which users a run asks about") is that night's index, so the demo shows the sweep whatever day it runs.
    static func sweptUserID(asOf: Date) -> String {
        let night = CandidateQuery.sweepNight(asOf: asOf, days: sweepDays)
        // The hash spreads ids evenly: every night's index is met within a few dozen tries (DemoTests checks all D).
        let n = (0..<10_000).first { CandidateQuery.sweepBucket(of: "demo-40-sweep-\($0)", days: sweepDays) == night } ?? 0
        return "demo-40-sweep-\(n)"
    }

    static var productEntitlements: [String: String] {
        Dictionary(uniqueKeysWithValues: products.map { ($0.productID, $0.entitlement ?? "premium") })
    }

    static func users(asOf t: Date) -> [DemoUser] {
        func d(_ days: Double) -> Date { t.addingTimeInterval(days * 86_400) }
        let usd = { (amount: Decimal) in SimulatedPrice(amount: amount, currency: "USD") }
        let eur = { (amount: Decimal) in SimulatedPrice(amount: amount, currency: "EUR") }
        func row(
            _ id: String, tier: Int, _ status: String, end: Double?, grace: Double? = nil, product: String = "premium_monthly",
            source: String = "apple_iap", txn: String? = nil
        ) -> UserRow {
            UserRow(
                id: id, currentTier: tier, status: status, endDate: end.map(d), graceEndsAt: grace.map(d), source: source,
                productID: product, originalTransactionID: txn, autoRenew: true)
        }
        func sub(
            _ product: String = "premium_monthly", store: String = "app_store", sandbox: Bool = false, purchased: Double = -30,
            expires: Double?, grace: Double? = nil, refunded: Double? = nil, billing: Double? = nil, unsubscribed: Double? = nil,
            resume: Double? = nil, txn: String? = nil, price: SimulatedPrice? = SimulatedPrice(amount: 9.99, currency: "USD")
        ) -> SimulatedSubscription {
            SimulatedSubscription(
                productID: product, store: store, isSandbox: sandbox, purchaseDate: d(purchased), expiresDate: expires.map(d),
                gracePeriodExpiresDate: grace.map(d), refundedAt: refunded.map(d), unsubscribeDetectedAt: unsubscribed.map(d),
                billingIssuesDetectedAt: billing.map(d), autoResumeDate: resume.map(d), storeTransactionID: txn, price: price)
        }
        func subscriber(_ subs: SimulatedSubscription..., lifetime: [SimulatedNonSubscription] = []) -> SimulatedSubscriber {
            SimulatedSubscriber(firstSeen: d(-400), subscriptions: subs, nonSubscriptions: lifetime)
        }

        var users: [DemoUser] = [
            DemoUser(
                row: row("demo-01-missed-expiration", tier: 1, "active", end: -3),
                subscriber: subscriber(sub(expires: -3, unsubscribed: -10)),
                shows: "paid period over, webhook lost → downgrade, RESUBSCRIBE intent"),
            DemoUser(
                row: row("demo-02-missed-renewal", tier: 1, "active", end: -2),
                subscriber: subscriber(sub(purchased: -2, expires: 28)), shows: "renewal webhook lost → extend"),
            DemoUser(
                row: row("demo-03-restored", tier: 0, "expired", end: -12),
                subscriber: subscriber(sub("premium_annual", purchased: -1, expires: 364, price: eur(49.99))),
                shows: "resubscribed, never granted → restore"),
            DemoUser(
                row: row("demo-04-billing-issue", tier: 1, "active", end: -1),
                subscriber: subscriber(sub(expires: -1, grace: 15, billing: -1)),
                shows: "card declined, in grace → billing_issue + UPDATE_PAYMENT intent"),
            DemoUser(
                row: row("demo-05-billing-recovered", tier: 1, "billing_issue", end: -2, grace: 10),
                subscriber: subscriber(sub(purchased: -1, expires: 29)), shows: "payment fixed → active again"),
            DemoUser(
                row: row("demo-06-grace-expired", tier: 1, "billing_issue", end: -20, grace: -4),
                subscriber: subscriber(sub(expires: -20, grace: -4, billing: -20)), shows: "grace over → downgrade"),
            DemoUser(
                row: row("demo-07-missed-refund", tier: 2, "active", end: -1, product: "pro_monthly"),
                subscriber: subscriber(sub("pro_monthly", purchased: -1, expires: 29, refunded: -0.5, price: usd(19.99))),
                shows: "refunded → revoke"),
            DemoUser(
                row: row("demo-08-product-change", tier: 1, "active", end: -1),
                subscriber: subscriber(sub(expires: -1), sub("pro_annual", purchased: -1, expires: 364, price: usd(119.99))),
                shows: "upgraded to pro → upgrade"),
            DemoUser(
                row: row("demo-09-sandbox-only", tier: 1, "active", end: -1),
                subscriber: subscriber(sub(sandbox: true, purchased: -1, expires: 29)),
                shows: "TestFlight purchase in production → never entitles"),
            DemoUser(
                row: row("demo-10-unknown-product", tier: 1, "active", end: -1),
                subscriber: subscriber(sub("promo_mystery_sku", purchased: -1, expires: 29)),
                shows: "product missing from product_tiers → skipped"),
            DemoUser(
                row: row("demo-11-unknown-at-source", tier: 1, "active", end: -1), subscriber: nil,
                shows: "RevenueCat does not know the user (201) → never downgraded"),
            DemoUser(
                row: row("demo-12-revenuecat-down", tier: 1, "active", end: -1),
                subscriber: subscriber(sub(expires: -1)), revenueCatFault: (.status(503), nil),
                shows: "RevenueCat 503 on every try → fetch_error, untouched"),
            DemoUser(
                row: row("demo-13-rate-limited", tier: 1, "active", end: -1),
                subscriber: subscriber(sub(purchased: -1, expires: 29)),
                revenueCatFault: (.rateLimited(backoffMS: 50, retryAfter: nil), 1),
                shows: "429 once, retried after backoff_ms → extend"),
            DemoUser(
                row: row("demo-14-in-sync", tier: 1, "billing_issue", end: -1, grace: 5),
                subscriber: subscriber(sub(expires: -1, grace: 5, billing: -1)), shows: "nothing to change"),
            DemoUser(
                row: row("demo-15-lifetime", tier: 0, "expired", end: -20, product: "pro_monthly"),
                subscriber: SimulatedSubscriber(
                    firstSeen: d(-400), subscriptions: [sub("pro_monthly", expires: -20, price: usd(19.99))],
                    nonSubscriptions: [
                        SimulatedNonSubscription(
                            productID: "pro_lifetime", id: "np_demo15", purchaseDate: d(-3), storeTransactionID: "300000015",
                            price: usd(199.99))
                    ]), shows: "bought lifetime → restore"),
            DemoUser(
                row: row("demo-16-google-paused", tier: 1, "active", end: -3, product: "gp_premium", source: "google_iap"),
                subscriber: subscriber(sub("gp_premium", store: "play_store", expires: -3, resume: 25)),
                shows: "Google Play pause → paused, tier removed"),
            DemoUser(
                row: row("demo-17-stripe-canceled", tier: 2, "active", end: -1, product: "stripe_pro", source: "stripe"),
                subscriber: subscriber(sub("stripe_pro", store: "stripe", purchased: -1, expires: 29, unsubscribed: -0.5, price: usd(24))),
                shows: "Stripe renewal with auto-renew off → extend, canceled"),
            DemoUser(
                row: row("demo-18-lapsed-still-lapsed", tier: 0, "expired", end: -30),
                subscriber: subscriber(sub(expires: -30)), shows: "lapsed and still lapsed → in sync"),
            DemoUser(
                row: row("demo-19-canceled-lapsed", tier: 0, "canceled", end: -8),
                subscriber: subscriber(sub(expires: -8, unsubscribed: -20)), shows: "canceled then expired → status expired"),
        ]

        // Apple as the ground truth for App Store subscriptions.
        users += [
            DemoUser(
                row: row("demo-20-apple-renewed", tier: 1, "active", end: -3, txn: "200000020"),
                subscriber: subscriber(sub(expires: -3, txn: "200000020")),
                apple: [
                    AppStoreScenario(
                        originalTransactionID: "200000020", transactionID: "200000120", productID: "premium_monthly", status: 1,
                        purchaseDate: d(-3), expiresDate: d(27), price: 9990, currency: "USD")
                ], shows: "RevenueCat lags, Apple says renewed → extend, source_conflict"),
            DemoUser(
                row: row("demo-21-apple-revoked", tier: 1, "active", end: -1, txn: "200000021"),
                subscriber: subscriber(sub(purchased: -1, expires: 29, txn: "200000021")),
                apple: [
                    AppStoreScenario(
                        originalTransactionID: "200000021", productID: "premium_monthly", status: 5, purchaseDate: d(-1),
                        expiresDate: d(29), revocationDate: d(-0.5), revocationReason: 0, price: 9990, currency: "USD")
                ], shows: "Apple revoked (refund) while RevenueCat still grants → revoke, source_conflict"),
            DemoUser(
                row: row("demo-22-apple-grace", tier: 1, "active", end: -2, txn: "200000022"),
                subscriber: subscriber(sub(expires: -2, txn: "200000022")),
                apple: [
                    AppStoreScenario(
                        originalTransactionID: "200000022", productID: "premium_monthly", status: 4, purchaseDate: d(-32),
                        expiresDate: d(-2), gracePeriodExpiresDate: d(12), isInBillingRetryPeriod: true, price: 9990,
                        currency: "USD")
                ], shows: "Apple billing grace period → billing_issue, UPDATE_PAYMENT"),
            DemoUser(
                row: row("demo-23-apple-forged", tier: 1, "active", end: -2, txn: "200000023"),
                subscriber: subscriber(sub(expires: -2, txn: "200000023")),
                apple: [
                    AppStoreScenario(
                        originalTransactionID: "200000023", productID: "premium_monthly", status: 2, purchaseDate: d(-32),
                        expiresDate: d(-2), price: 9990, currency: "USD")
                ], appleFault: ("200000023", .forgedSignature),
                shows: "signature by an untrusted chain → verification_failed, untouched"),
        ]

        // A user known only by a legacy receipt: verifyReceipt reveals the original transaction id.
        var legacy = DemoUser(
            row: row("demo-34-legacy-receipt", tier: 1, "active", end: -2),
            subscriber: subscriber(sub(expires: -2)),
            apple: [
                AppStoreScenario(
                    originalTransactionID: "200000034", transactionID: "200000134", productID: "premium_monthly", status: 1,
                    purchaseDate: d(-2), expiresDate: d(28), price: 9990, currency: "USD")
            ],
            shows:
                "only a stored receipt → verifyReceipt reveals the transaction; RevenueCat lags, Apple says renewed → extend, source_conflict, id stored"
        )
        legacy.receipt = AppleReceiptScenario(
            receiptData: "TUlJVDBnWUpLb1pJaHZjTkFRY0NvSUlUd2pDQ0U3NENBUUV4Q3pBSkJnVXJEZ01DR2dVQU1JSURjZ1lKS29aSWh2Y05B",
            transactions: [
                .init(
                    originalTransactionID: "200000034", transactionID: "200000034", productID: "premium_monthly",
                    purchaseDate: d(-32), expiresDate: d(-2)),
                .init(
                    originalTransactionID: "200000034", transactionID: "200000134", productID: "premium_monthly",
                    purchaseDate: d(-2), expiresDate: d(28)),
            ],
            renewals: [.init(originalTransactionID: "200000034", productID: "premium_monthly")])
        users.append(legacy)

        // A handful of ordinary renewals the webhooks missed, so the night looks like a night.
        for n in 24...33 {
            let id = String(format: "demo-%02d-renewal", n)
            users.append(
                DemoUser(
                    row: row(
                        id, tier: n % 3 == 0 ? 2 : 1, "active", end: -Double(n % 4 + 1),
                        product: n % 3 == 0 ? "pro_monthly" : "premium_monthly"),
                    subscriber: subscriber(
                        sub(
                            n % 3 == 0 ? "pro_monthly" : "premium_monthly", purchased: -1, expires: 29,
                            price: n % 3 == 0 ? usd(19.99) : usd(9.99))),
                    shows: "missed renewal → extend", folded: true))
        }
        // Stripe and Google Play asked directly, Apple's notification history, and the rolling sweep.
        users += storeAndFeedUsers(asOf: t)
        users += ownershipUsers(asOf: t)
        return users
    }
}
