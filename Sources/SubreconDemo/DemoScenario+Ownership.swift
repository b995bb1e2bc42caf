import Foundation
import StoreSimulator
import SubreconCore

/// The demo's users of CONTRACT "Whose purchase it is" (whose purchase it is): a Google resubscription the old token would have downgraded,
/// an App Store purchase newer than the row's, a purchase transferred to another account, a lost first purchase the
/// Apple feed links through `appAccountToken`, a web subscriber no row names linked through Stripe's metadata, and an
/// orphan no account claims.
extension DemoScenario {
    /// The `appAccountToken` the app handed Apple for demo-64 (its `account_token`), and another account's.
    static let lostBuyerToken = "5d6f0c1e-7a2b-4c3d-9e8f-0a1b2c3d4e64"
    static let otherBuyerToken = "0f0e0d0c-0b0a-4908-8706-050403020162"

    static func ownershipUsers(asOf t: Date) -> [DemoUser] {
        let m = Make(t: t)
        let d = m.d
        func rcSubscriber(_ product: String, store: String = "app_store", txn: String) -> SimulatedSubscriber {
            SimulatedSubscriber(
                firstSeen: d(-400),
                subscriptions: [
                    SimulatedSubscription(
                        productID: product, store: store, purchaseDate: d(-2), expiresDate: d(28), storeTransactionID: txn,
                        price: SimulatedPrice(amount: 9.99, currency: "USD"))
                ])
        }
        func apple(_ original: String, txn: String, status: Int, from: Double, to: Double, account: String? = nil) -> AppStoreScenario {
            var scenario = AppStoreScenario(
                originalTransactionID: original, transactionID: txn, productID: "premium_monthly", status: status,
                purchaseDate: d(from), expiresDate: d(to), price: 9990, currency: "USD")
            scenario.appAccountToken = account
            return scenario
        }
        var lost = m.row("demo-64-lost-first-purchase", tier: 0, "none", end: -400, product: "premium_monthly", source: "apple_iap")
        lost.accountToken = lostBuyerToken
        var subscribed = AppleHistoryNotification(type: "SUBSCRIBED", originalTransactionID: "200000065", sentAt: d(-1))
        subscribed.appAccountToken = lostBuyerToken.uppercased()
        var web = m.stripe("sub_demo65", "active", from: -1, to: 29, product: "prod_web_premium", amount: 999)
        web.metadata = ["user_id": "demo-65-web-unrecorded"]
        var google = DemoUser(
            row: m.row(
                "demo-60-google-resubscribed", tier: 1, "active", end: -2, product: "gp_premium", source: "google_iap",
                token: "demo-token-60-old"),
            subscriber: rcSubscriber("gp_premium", store: "play_store", txn: "GPA.3399-0060-0060-00060..0"),
            shows: "resubscribed on Google Play: the old token says EXPIRED, RevenueCat's new line is live → extend, never downgraded")
        google.google = .single(
            "SUBSCRIPTION_STATE_EXPIRED", product: "gp_premium", start: d(-62), expiry: d(-32), orderID: "GPA.3399-0059-0059-00059..1")
        var linked = DemoUser(
            row: m.row("demo-65-web-unrecorded", tier: 0, "none", end: -400, product: "prod_web_premium", source: "stripe"),
            stripe: [web],
            shows: "a web subscriber no row names: Stripe's inventory lists it, metadata.user_id names the user → linked, restore")
        linked.stripeCustomer = "cus_demo65"
        return [
            google,
            DemoUser(
                row: m.row(
                    "demo-61-apple-newer-purchase", tier: 1, "active", end: -2, product: "premium_monthly", source: "apple_iap",
                    txn: "200000061"),
                subscriber: rcSubscriber("premium_monthly", txn: "200000163"),
                apple: [
                    apple("200000061", txn: "200000161", status: 2, from: -32, to: -2),
                    apple("200000062", txn: "200000163", status: 1, from: -2, to: 28),
                ],
                shows: "bought again under a new original transaction: the row's is old → extend, the new id written (stale_identifier)"),
            DemoUser(
                row: m.row(
                    "demo-62-transferred-away", tier: 1, "active", end: -2, product: "premium_monthly", source: "apple_iap",
                    txn: "200000063"),
                apple: [apple("200000063", txn: "200000164", status: 1, from: -2, to: 28, account: otherBuyerToken)],
                shows: "purchase restored on another account (a RevenueCat TRANSFER): Apple names another buyer → untouched, listed"),
            DemoUser(
                row: lost, apple: [apple("200000065", txn: "200000165", status: 1, from: -1, to: 29, account: lostBuyerToken.uppercased())],
                notifications: [
                    subscribed,
                    // A purchase no row names and whose store names no account: listed in orphans.csv, never acted on.
                    AppleHistoryNotification(type: "SUBSCRIBED", originalTransactionID: "200000099", sentAt: d(-1)),
                ],
                shows: "first webhook lost: Apple's feed names a purchase no row holds, appAccountToken names the user → linked, restore"),
            linked,
        ]
    }
}
