import Foundation
import StoreSimulator
import SubreconCore
import SubreconPorts
import SubreconTestKit

extension RandomizedNightTests {
    /// One Google Play user, known by the row's `google_purchase_token` (RevenueCat does not know the user): Google
    /// says active, expired, in grace, canceled but still in its period, 410 (expired too long ago: evidence, expired),
    /// or its evidence cannot be used (404: absence, the user is `unknown_at_source`; a 500 on every attempt);
    /// sometimes a transient 503 first. Or the user resubscribed (CONTRACT "Whose purchase it is"): the row still holds the old token, which
    /// Google answers EXPIRED or 410, while RevenueCat reports the new line active: the new line's tier is the
    /// floor (`Generated.linesEntitle`).
    static func generateGooglePlay(
        id: String, index: Int, rng: inout SeededRandom, google: GooglePlaySimulator, revenueCat: RevenueCatSimulator
    ) async -> Generated {
        let product = rng.chance(0.5) ? "premium_monthly" : "pro_monthly"
        let tier = product == "premium_monthly" ? 1 : 2
        let token = "tok-\(id)"
        let row = candidate(
            {
                UserRow(
                    id: id, currentTier: $0, status: $1, endDate: Harness.day($2), graceEndsAt: $3.map(Harness.day), source: "google_iap",
                    productID: product, autoRenew: true, identifiers: [.googlePlay: token].compactMapValues { $0 })
            }, tier: tier, rng: &rng)
        func play(_ state: String, start: Double, expiry: Double, autoRenew: Bool = true) -> SimulatedPlaySubscription {
            .single(
                "SUBSCRIPTION_STATE_" + state, product: product, start: Harness.day(start), expiry: Harness.day(expiry),
                autoRenew: autoRenew, orderID: String(format: "GPA.3311-2222-1111-%05d..0", index))
        }
        func entitled(_ status: String = "active", end: Double) -> Truth {
            .known(.entitled(tier, status, end: end, product: product, source: "google_iap"))
        }
        var purchase: SimulatedPlaySubscription?
        let truth: Truth
        var drift: String?
        var floor: Int?
        switch rng.int(0...7) {
        case 0:
            let end = Double(rng.int(1...30))
            purchase = play("ACTIVE", start: -2, expiry: end)
            truth = entitled(end: end)
        case 1:
            let end = -Double(rng.int(1...30))
            purchase = play("EXPIRED", start: end - 30, expiry: end)
            truth = .known(.ended(end: Harness.day(end), product: product, source: "google_iap"))
        case 2:
            // In grace, Google extends `expiryTime` to the grace end: entitled in billing issue until then.
            let end = Double(rng.int(1...5))
            purchase = play("IN_GRACE_PERIOD", start: -30, expiry: end)
            truth = entitled("billing_issue", end: end)
        case 3:
            let end = Double(rng.int(1...30))
            purchase = play("CANCELED", start: -1, expiry: end, autoRenew: false)
            truth = entitled("canceled", end: end)
        case 4:
            // 410: evidence the row's line has expired, with no dates: the row's end date stays as it was.
            await google.setGone(token)
            truth = .known(.ended(end: row.endDate, product: product, source: "google_iap"))
        case 7:
            // Resubscribed: the old token's end is about the old line only; the new one entitles.
            let end = Double(rng.int(2...30))
            if rng.chance(0.5) {
                purchase = play("EXPIRED", start: -90, expiry: -Double(rng.int(1...40)))
            } else {
                await google.setGone(token)
            }
            await revenueCat.setSubscriber(
                SimulatedSubscriber(
                    firstSeen: Harness.day(-300),
                    subscriptions: [
                        SimulatedSubscription(
                            productID: product, store: "play_store", purchaseDate: Harness.day(-1), expiresDate: Harness.day(end),
                            storeTransactionID: String(format: "GPA.9911-2222-1111-%05d..0", index))
                    ]), for: id)
            truth = entitled(end: end)
            floor = tier
        case 5:
            truth = .unusable("Google Play does not know the token (404)")
            drift = "unknown_at_source"
        default:
            purchase = play("ACTIVE", start: -2, expiry: 28)
            await google.setFault(.status(500), token: token)
            truth = .unusable("Google Play 500 on every attempt")
            drift = "fetch_error"
        }
        if let purchase { await google.setPurchase(purchase, token: token) }
        if case .known = truth, rng.chance(0.15) { await google.setFault(.status(503), token: token, times: 1) }
        return Generated(row: row, truth: truth, refund: nil, drift: drift, linesEntitle: floor)
    }
}
