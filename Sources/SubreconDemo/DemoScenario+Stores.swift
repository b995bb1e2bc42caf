import Foundation
import StoreSimulator
import SubreconCore

/// The demo's users for the stores asked directly (Stripe, Google Play), Apple's notification history and the
/// rolling sweep, and the second run's users, which no RevenueCat knows.
extension DemoScenario {
    /// Dates, rows and store answers relative to the demo's as-of.
    struct Make {
        let t: Date

        func d(_ days: Double) -> Date { t.addingTimeInterval(days * 86_400) }

        func row(
            _ id: String, tier: Int, _ status: String, end: Double, product: String, source: String, txn: String? = nil,
            customer: String? = nil, token: String? = nil
        ) -> UserRow {
            UserRow(
                id: id, currentTier: tier, status: status, endDate: d(end), source: source, productID: product,
                originalTransactionID: txn, autoRenew: true, identifiers: [.stripe: customer, .googlePlay: token].compactMapValues { $0 })
        }

        /// A Stripe subscription of one monthly item of `product` (`amount` in cents, USD).
        func stripe(
            _ id: String, _ status: String, from start: Double, to end: Double, product: String, amount: Int64,
            cancelAtPeriodEnd: Bool = false, canceled: Double? = nil, ended: Double? = nil
        ) -> SimulatedStripeSubscription {
            SimulatedStripeSubscription(
                id: id, status: status, cancelAtPeriodEnd: cancelAtPeriodEnd, canceledAt: canceled.map(d), endedAt: ended.map(d),
                currentPeriodStart: d(start), currentPeriodEnd: d(end),
                items: [
                    SimulatedStripeItem(
                        id: "si_" + id.dropFirst(4), priceID: "price_" + product.dropFirst(5) + "_month", productID: product,
                        unitAmount: amount, currency: "usd")
                ])
        }

        /// A Google Play subscription of `gp_premium` in `SUBSCRIPTION_STATE_<state>`.
        func play(_ state: String, start: Double, expiry: Double) -> SimulatedPlaySubscription {
            .single("SUBSCRIPTION_STATE_" + state, product: "gp_premium", start: d(start), expiry: d(expiry))
        }
    }

    /// Run 1's users beyond RevenueCat's view: Stripe and Google Play asked directly, a refund only Apple's
    /// notification history reports, and the user tonight's sweep catches.
    static func storeAndFeedUsers(asOf t: Date) -> [DemoUser] {
        let m = Make(t: t)
        let d = m.d
        let swept = sweptUserID(asOf: t)
        var users = [
            DemoUser(
                row: m.row(
                    "demo-35-stripe-conflict", tier: 2, "active", end: -1, product: "prod_web_pro", source: "stripe", customer: "cus_demo35"
                ),
                subscriber: SimulatedSubscriber(
                    firstSeen: d(-400),
                    subscriptions: [
                        SimulatedSubscription(
                            productID: "prod_web_pro", store: "stripe", purchaseDate: d(-1), expiresDate: d(29),
                            storeTransactionID: "sub_demo35", price: SimulatedPrice(amount: 24, currency: "USD"))
                    ]),
                stripe: [
                    m.stripe("sub_demo35", "canceled", from: -31, to: -1, product: "prod_web_pro", amount: 2400, canceled: -6, ended: -1)
                ],
                shows: "web subscriber: RevenueCat says renewed, Stripe says canceled → Stripe wins, downgrade, source_conflict"),
            DemoUser(
                row: m.row(
                    "demo-36-stripe-past-due", tier: 1, "active", end: -1, product: "prod_web_premium", source: "stripe",
                    customer: "cus_demo36"),
                stripe: [m.stripe("sub_demo36", "past_due", from: -1, to: 29, product: "prod_web_premium", amount: 999)],
                shows: "Stripe renewal payment failed (past_due): entitled to the new period end in billing_issue → extend, UPDATE_PAYMENT"),
            DemoUser(
                row: m.row(
                    "demo-37-google-renewed", tier: 1, "active", end: -2, product: "gp_premium", source: "google_iap",
                    token: "demo-token-37"),
                google: m.play("ACTIVE", start: -32, expiry: 28),
                shows: "Google Play renewal the webhook missed, asked by purchase token → extend"),
            DemoUser(
                row: m.row(
                    "demo-38-google-grace", tier: 1, "active", end: -1, product: "gp_premium", source: "google_iap", token: "demo-token-38"),
                google: m.play("IN_GRACE_PERIOD", start: -31, expiry: 2),
                shows: "Google Play payment declined, in grace until the new expiry → extend, billing_issue, UPDATE_PAYMENT"),
            DemoUser(
                row: m.row(
                    "demo-39-apple-feed-refund", tier: 1, "active", end: 305, product: "premium_annual", source: "apple_iap",
                    txn: "200000039"),
                subscriber: SimulatedSubscriber(
                    firstSeen: d(-400),
                    subscriptions: [
                        SimulatedSubscription(
                            productID: "premium_annual", purchaseDate: d(-60), expiresDate: d(305), refundedAt: d(-1),
                            storeTransactionID: "200000039", price: SimulatedPrice(amount: 99.99, currency: "USD"))
                    ]),
                apple: [
                    AppStoreScenario(
                        originalTransactionID: "200000039", productID: "premium_annual", status: 5, purchaseDate: d(-60),
                        expiresDate: d(305), revocationDate: d(-1), revocationReason: 0, price: 99990, currency: "USD")
                ],
                notifications: [
                    AppleHistoryNotification(type: "REFUND", originalTransactionID: "200000039", productID: "premium_annual", sentAt: d(-1))
                ],
                shows: "annual plan refunded in month 2, ends in 10 months: only Apple's notification history names it → revoke"),
            DemoUser(
                row: m.row(swept, tier: 1, "active", end: 18, product: "premium_monthly", source: "apple_iap"),
                subscriber: SimulatedSubscriber(
                    firstSeen: d(-400),
                    subscriptions: [
                        SimulatedSubscription(
                            productID: "premium_monthly", purchaseDate: d(-12), expiresDate: d(-2),
                            price: SimulatedPrice(amount: 9.99, currency: "USD")),
                        SimulatedSubscription(
                            productID: "pro_monthly", purchaseDate: d(-2), expiresDate: d(28),
                            price: SimulatedPrice(amount: 19.99, currency: "USD")),
                    ]),
                shows: "upgraded to pro mid-period, webhook lost; no candidate rule names it, tonight's sweep share → upgrade"),
        ]
        users.append(
            DemoUser(
                row: m.row(
                    "demo-41-google-voided", tier: 1, "active", end: 300, product: "gp_premium", source: "google_iap",
                    token: "demo-token-41"),
                google: m.play("EXPIRED", start: -60, expiry: -1),
                voided: [
                    SimulatedVoidedPurchase(purchaseToken: "demo-token-41", orderID: "GPA.3399-0041-0041-00041", voidedTime: d(-1))
                ],
                shows: "Google Play purchase refunded (voided) mid-period, row ends in 10 months: "
                    + "only voidedpurchases.list names it; Google says expired, the void makes it refunded → downgrade"))
        users.append(
            DemoUser(
                row: m.row(
                    "demo-42-stripe-event-canceled", tier: 1, "active", end: 200, product: "prod_web_premium", source: "stripe",
                    customer: "cus_demo42"),
                stripe: [
                    m.stripe(
                        "sub_demo42", "canceled", from: -30, to: 200, product: "prod_web_premium", amount: 999, canceled: -1, ended: -1)
                ],
                stripeEvents: [
                    SimulatedStripeEvent(
                        id: "evt_demo42", type: "customer.subscription.deleted", created: d(-1), customer: "cus_demo42",
                        objectID: "sub_demo42", status: "canceled")
                ],
                shows: "web subscription canceled at once, row ends in 200 days: only Stripe's events name it; "
                    + "Stripe says canceled → downgrade"))
        users += financeUsers(m)
        return users
    }

    /// Run 2: no RevenueCat. Each user is asked of its own store only, by the identifier its row holds.
    static func withoutRevenueCat(asOf t: Date) -> [DemoUser] {
        let m = Make(t: t)
        let d = m.d
        return [
            DemoUser(
                row: m.row(
                    "demo-51-apple-only", tier: 1, "active", end: -3, product: "premium_monthly", source: "apple_iap", txn: "200000051"),
                apple: [
                    AppStoreScenario(
                        originalTransactionID: "200000051", transactionID: "200000151", productID: "premium_monthly", status: 1,
                        purchaseDate: d(-3), expiresDate: d(27), price: 9990, currency: "USD")
                ],
                shows: "known by iap_original_transaction_id; Apple says renewed → extend"),
            DemoUser(
                row: m.row(
                    "demo-52-apple-only-lapsed", tier: 1, "active", end: -2, product: "premium_monthly", source: "apple_iap",
                    txn: "200000052"),
                apple: [
                    AppStoreScenario(
                        originalTransactionID: "200000052", productID: "premium_monthly", status: 2, purchaseDate: d(-32),
                        expiresDate: d(-2), price: 9990, currency: "USD")
                ],
                shows: "Apple says expired → downgrade, RESUBSCRIBE"),
            DemoUser(
                row: m.row(
                    "demo-53-stripe-web", tier: 2, "active", end: -1, product: "prod_web_pro", source: "stripe", customer: "cus_demo53"),
                stripe: [
                    m.stripe("sub_demo53", "active", from: -1, to: 29, product: "prod_web_pro", amount: 2400, cancelAtPeriodEnd: true)
                ],
                shows: "web subscriber renewed, then turned auto-renew off → extend, canceled"),
            DemoUser(
                row: m.row(
                    "demo-54-google-direct", tier: 1, "active", end: -2, product: "gp_premium", source: "google_iap", token: "demo-token-54"
                ),
                google: m.play("ACTIVE", start: -32, expiry: 28),
                shows: "Google Play asked directly by purchase token → extend"),
            stripeRefund(m),
        ]
    }

    /// A web subscriber whose renewal Stripe charged and then refunded in full (CONTRACT "Finance figures": `amount_refunded`): the
    /// subscription is still `active` in Stripe, the period's invoice payment's charge says `refunded`.
    static func stripeRefund(_ m: Make) -> DemoUser {
        var subscription = m.stripe("sub_demo55", "active", from: -1, to: 29, product: "prod_web_pro", amount: 2400)
        subscription.latestInvoice = .paid(id: "in_demo55", amount: 2400, paymentIntent: "pi_demo55", created: m.d(-1))
        return DemoUser(
            row: m.row(
                "demo-55-stripe-refund", tier: 2, "active", end: -1, product: "prod_web_pro", source: "stripe", customer: "cus_demo55"),
            stripe: [subscription],
            stripeCharges: [
                SimulatedStripeCharge(
                    id: "ch_demo55", paymentIntentID: "pi_demo55", amount: 2400, amountRefunded: 2400, created: m.d(-1),
                    refunds: [SimulatedStripeRefund(id: "re_demo55", amount: 2400, created: m.d(-0.5))])
            ],
            shows: "web renewal charged, then refunded in full (Stripe still says active) → downgrade, refunded value 24.00 USD")
    }

    /// The finance figures' own cases (CONTRACT "Finance figures"): a family member's refund (revoked, never revenue), a trial whose
    /// tier comes back (restored, never revenue), and a user with three refunds across two stores (the review list).
    static func financeUsers(_ m: Make) -> [DemoUser] {
        let d = m.d
        let usd = { (amount: Decimal) in SimulatedPrice(amount: amount, currency: "USD") }
        return [
            DemoUser(
                row: m.row("demo-43-family-refund", tier: 1, "active", end: -1, product: "premium_monthly", source: "apple_iap"),
                subscriber: SimulatedSubscriber(
                    firstSeen: d(-400),
                    subscriptions: [
                        SimulatedSubscription(
                            productID: "premium_monthly", purchaseDate: d(-5), expiresDate: d(25), refundedAt: d(-0.5),
                            ownershipType: "FAMILY_SHARED", storeTransactionID: "demo-fam-43", price: usd(9.99))
                    ]),
                shows: "family member's access revoked by a refund: tier revoked like any other, money 0 (family_shared)"),
            DemoUser(
                row: m.row("demo-44-trial-restored", tier: 0, "expired", end: -10, product: "premium_monthly", source: "google_iap"),
                subscriber: SimulatedSubscriber(
                    firstSeen: d(-400),
                    subscriptions: [
                        SimulatedSubscription(
                            productID: "premium_monthly", store: "play_store", periodType: "trial", purchaseDate: d(-1),
                            expiresDate: d(6), price: usd(0))
                    ]),
                shows: "free trial started, webhook lost → restore; a trial is never revenue (trial)"),
            DemoUser(
                row: m.row("demo-45-serial-refunder", tier: 1, "active", end: -1, product: "premium_monthly", source: "apple_iap"),
                subscriber: SimulatedSubscriber(
                    firstSeen: d(-400),
                    subscriptions: [
                        // RevenueCat keys subscriptions by product: three refunded purchases are three products.
                        SimulatedSubscription(
                            productID: "pro_annual", purchaseDate: d(-200), expiresDate: d(165), refundedAt: d(-150),
                            storeTransactionID: "demo-r45-1", price: usd(119.99)),
                        SimulatedSubscription(
                            productID: "pro_monthly", store: "play_store", purchaseDate: d(-60), expiresDate: d(-30),
                            refundedAt: d(-50), storeTransactionID: "GPA.demo-r45-2", price: usd(19.99)),
                        SimulatedSubscription(
                            productID: "premium_monthly", purchaseDate: d(-1), expiresDate: d(29), refundedAt: d(-0.5),
                            storeTransactionID: "demo-r45-3", price: usd(9.99)),
                    ]),
                shows: "third refund in a year across the App Store and Google Play → revoked, listed in refund_review.csv"),
        ]
    }
}
