import Foundation
import StoreSimulator
import SubreconCore
import SubreconPorts
import SubreconTestKit
import SubreconTestSupport

extension RandomizedNightTests {
    /// One RevenueCat user (an App Store purchase RevenueCat lists without a transaction Apple knows): a stale row that
    /// the candidate scan picks up, and what RevenueCat says: renewed, expired, refunded, in grace, or evidence that
    /// cannot be used; sometimes a transient 429 or 503 first.
    static func generate(id: String, rng: inout SeededRandom, harness h: Harness) async -> Generated {
        let product = rng.chance(0.5) ? "premium_monthly" : "pro_monthly"
        let tier = product == "premium_monthly" ? 1 : 2
        let row = candidate({ h.row(id, tier: $0, $1, end: $2, grace: $3, product: product) }, tier: tier, rng: &rng)
        let truth: Truth
        var refund: String?
        var subscriber: SimulatedSubscriber?
        func known(_ subscription: SimulatedSubscription) -> SimulatedSubscriber {
            SimulatedSubscriber(firstSeen: Harness.day(-300), subscriptions: [subscription])
        }
        switch rng.int(0...9) {
        case 0...2:
            let end = Double(rng.int(1...30))
            subscriber = known(Harness.subscription(product, purchased: -2, expires: end))
            truth = .known(.entitled(tier, end: end, product: product, source: "apple_iap"))
        case 3...4:
            let end = -Double(rng.int(1...30))
            subscriber = known(Harness.subscription(product, expires: end))
            truth = .known(.ended(end: Harness.day(end), product: product, source: "apple_iap"))
        case 5:
            // RevenueCat names the store transaction: Apple is asked about it and does not know it (absence).
            subscriber = known(
                Harness.subscription(product, purchased: -3, expires: 27, refunded: -Double(rng.int(0...2)), txn: "txn-\(id)"))
            truth = .known(.ended("refunded", end: Harness.day(27), product: product, source: "apple_iap"))
            refund = "txn-\(id)"
        case 6:
            let grace = Double(rng.int(2...10))
            subscriber = known(Harness.subscription(product, expires: -1, grace: grace, billing: -1))
            truth = .known(.entitled(tier, "billing_issue", end: -1, grace: grace, product: product, source: "apple_iap"))
        default:
            let broken: [(String, RevenueCatFault)] = [
                ("500 forever", .status(500)),
                ("malformed JSON", .malformedJSON),
                (
                    "expiry missing",
                    .raw(
                        status: 200, headers: [:],
                        body: RevenueCatWorld.subscriberBody(
                            subscriptions:
                                #"{"\#(product)": {"store": "app_store", "is_sandbox": false, "purchase_date": "\#(RevenueCatWorld.iso(-20))"}}"#
                        ))
                ),
                (
                    "entitlement without product",
                    .raw(
                        status: 200, headers: [:],
                        body: RevenueCatWorld.subscriberBody(
                            entitlements: #"{"e": {"expires_date": "\#(RevenueCatWorld.iso(20))"}}"#,
                            subscriptions:
                                #"{"\#(product)": {"store": "app_store", "is_sandbox": false, "expires_date": "\#(RevenueCatWorld.iso(-20))"}}"#
                        ))
                ),
                ("unknown to RevenueCat", .raw(status: 201, headers: [:], body: RevenueCatWorld.subscriberBody())),
            ]
            let (why, fault) = broken[rng.int(0...broken.count - 1)]
            await h.revenueCat.setFault(fault, for: id)
            // A customer RevenueCat has (v2 answers 200) whose v1 answers are broken; the fault, queued for good,
            // answers every v1 request. "Unknown to RevenueCat" has none: v2 answers 404, as v1's 201 says.
            if why != "unknown to RevenueCat" {
                await h.revenueCat.setSubscriber(SimulatedSubscriber(firstSeen: Harness.day(-300)), for: id)
            }
            truth = .unusable(why)
        }
        if let subscriber {
            await h.revenueCat.setSubscriber(subscriber, for: id)
            // Transient faults the job must ride out: a 429 or a 503 once.
            if rng.chance(0.2) { await h.revenueCat.setFault(.rateLimited(backoffMS: 20, retryAfter: nil), for: id, times: 1) }
            if rng.chance(0.1) { await h.revenueCat.setFault(.status(503), for: id, times: 1) }
        }
        return Generated(row: row, truth: truth, refund: refund)
    }
}
