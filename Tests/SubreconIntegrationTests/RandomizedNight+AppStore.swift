import Foundation
import StoreSimulator
import SubreconCore
import SubreconPorts
import SubreconTestKit

extension RandomizedNightTests {
    /// What Apple says about one App Store user, and what the job must end with.
    struct AppleCase {
        var scenario: AppStoreScenario
        var truth: Truth
        var refund: String?
        var fault: AppStoreFault?
        var drift: String?
    }

    /// One App Store user, known by the row's `iap_original_transaction_id` (RevenueCat lists the same transaction with
    /// a stale view, or does not know the user); sometimes a transient 503 first. Apple is the authority for its own
    /// purchase (CONTRACT "Sources and the decision"): its view replaces RevenueCat's.
    static func generateAppStore(id: String, index: Int, rng: inout SeededRandom, harness h: Harness) async -> Generated {
        let product = rng.chance(0.5) ? "premium_monthly" : "pro_monthly"
        let tier = product == "premium_monthly" ? 1 : 2
        let original = String(format: "8%06d", index)
        if rng.chance(0.15) { return await neverRecorded(id: id, index: index, product: product, tier: tier, harness: h) }
        let row = candidate(
            { h.row(id, tier: $0, $1, end: $2, grace: $3, product: product, txn: original) }, tier: tier, rng: &rng)
        let apple = appleCase(original: original, product: product, tier: tier, rng: &rng)
        await h.appStore.setScenario(apple.scenario)
        if let fault = apple.fault {
            await h.appStore.setFault(fault, for: original)
        } else if rng.chance(0.15) {
            await h.appStore.setFault(.error(status: 503, errorCode: nil, times: 1), for: original)
        }
        if rng.chance(0.5) {
            // RevenueCat lists the same transaction, lagging behind (ending when the row says).
            let end = row.endDate.map { $0.timeIntervalSince(Harness.asOf) / 86_400 } ?? -2
            let stale = Harness.subscription(product, purchased: -32, expires: end, txn: original)
            await h.revenueCat.setSubscriber(SimulatedSubscriber(firstSeen: Harness.day(-300), subscriptions: [stale]), for: id)
        }
        return Generated(row: row, truth: apple.truth, refund: apple.refund, drift: apple.drift)
    }

    /// A paying App Store user the database never recorded (the first webhook was lost): the row holds no tier and no
    /// transaction, only the app's `account_token`. Apple's history names the purchase, its signed transaction names
    /// the buyer (`appAccountToken`, in upper case: compared case-insensitively): linked, restored, and the original
    /// transaction written into `iap_original_transaction_id` (CONTRACT "Whose purchase it is").
    static func neverRecorded(id: String, index: Int, product: String, tier: Int, harness h: Harness) async -> Generated {
        let original = String(format: "8%06d", index)
        let token = String(format: "5d6f0c1e-7a2b-4c3d-9e8f-%012d", index)
        var row = h.row(id, tier: 0, "none", end: nil, product: product)
        row.productID = nil
        row.source = nil
        var scenario = AppStoreScenario(
            originalTransactionID: original, productID: product, status: 1, purchaseDate: Harness.day(-1),
            expiresDate: Harness.day(29), price: 9990, currency: "USD")
        scenario.appAccountToken = token.uppercased()
        await h.appStore.setScenario(scenario)
        var subscribed = AppleHistoryNotification(
            type: "SUBSCRIBED", originalTransactionID: original, productID: product, sentAt: Harness.day(-1))
        subscribed.appAccountToken = token.uppercased()
        await h.history.add(subscribed)
        return Generated(
            row: row, truth: .known(.entitled(tier, end: 29, product: product, source: "apple_iap")), linesEntitle: tier,
            accountToken: token, appleWrite: original)
    }

    /// Apple says renewed, expired, refunded (revoked), in billing grace, in billing retry past its end, or its
    /// evidence cannot be used (a forged signature: `verification_failed`; a 500 on every attempt: `fetch_error`).
    static func appleCase(original: String, product: String, tier: Int, rng: inout SeededRandom) -> AppleCase {
        func scenario(_ status: Int, purchase: Double, expires: Double) -> AppStoreScenario {
            AppStoreScenario(
                originalTransactionID: original, productID: product, status: status, purchaseDate: Harness.day(purchase),
                expiresDate: Harness.day(expires), price: 9990, currency: "USD")
        }
        func ended(_ status: String = "expired", end: Double) -> Truth {
            .known(.ended(status, end: Harness.day(end), product: product, source: "apple_iap"))
        }
        switch rng.int(0...6) {
        case 0:
            let end = Double(rng.int(1...30))
            return AppleCase(
                scenario: scenario(1, purchase: -2, expires: end),
                truth: .known(.entitled(tier, end: end, product: product, source: "apple_iap")))
        case 1:
            let end = -Double(rng.int(1...30))
            return AppleCase(scenario: scenario(2, purchase: end - 30, expires: end), truth: ended(end: end))
        case 2:
            var revoked = scenario(5, purchase: -1, expires: 29)
            revoked.revocationDate = Harness.day(-0.5)
            revoked.revocationReason = 0
            return AppleCase(scenario: revoked, truth: ended("refunded", end: 29), refund: original)
        case 3:
            // Billing grace: the period ended, the grace has not; entitled in billing issue until the grace end.
            let grace = Double(rng.int(2...10))
            var inGrace = scenario(4, purchase: -31, expires: -1)
            inGrace.gracePeriodExpiresDate = Harness.day(grace)
            inGrace.isInBillingRetryPeriod = true
            return AppleCase(
                scenario: inGrace,
                truth: .known(.entitled(tier, "billing_issue", end: -1, grace: grace, product: product, source: "apple_iap")))
        case 4:
            // Billing retry without grace, past the period's end: not entitled (CONTRACT "Sources and the decision": expired, no grace after T).
            var retrying = scenario(3, purchase: -32, expires: -2)
            retrying.isInBillingRetryPeriod = true
            return AppleCase(scenario: retrying, truth: ended(end: -2))
        case 5:
            return AppleCase(
                scenario: scenario(1, purchase: -2, expires: 28), truth: .unusable("a forged App Store signature"), fault: .forgedSignature,
                drift: "verification_failed")
        default:
            return AppleCase(
                scenario: scenario(2, purchase: -32, expires: -2), truth: .unusable("App Store 500 on every attempt"),
                fault: .error(status: 500, errorCode: nil, times: 1_000), drift: "fetch_error")
        }
    }
}
