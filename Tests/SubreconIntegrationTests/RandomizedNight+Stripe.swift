import Foundation
import StoreSimulator
import SubreconCore
import SubreconPorts
import SubreconTestKit
import SubreconTestSupport

extension RandomizedNightTests {
    /// One Stripe web subscriber (RevenueCat knows the user and lists nothing, so Stripe's answer decides): a paid
    /// period, one refunded in full within the period (ended, `refunded`, at the period's end) or in part, canceled,
    /// past due, a test-mode (`livemode: false`) subscription, or evidence that cannot be used (the charges call
    /// failing, a full refund nobody dated); sometimes a transient 503 or 429 first.
    ///
    /// Or the subscriber was never recorded (linked through the inventory's `metadata.user_id`: its customer is written
    /// into `stripe_customer_id`), or Stripe names another buyer (`ownership_conflict`, untouched).
    ///
    /// Test mode in a production run never entitles (CONTRACT "Sources and the decision"/5.3, `sandbox_ignored`), nor is it evidence about the
    /// line that granted the row's tier (CONTRACT "Whose purchase it is"): a tier holder is `unknown_at_source` and untouched; a lapsed row
    /// is in sync.
    static func generateStripe(
        id: String, rng: inout SeededRandom, harness h: Harness, stripe: StripeSimulator, down: Bool
    ) async -> Generated {
        let customer = "cus_\(id)"
        let subscriptionID = "sub_\(id)"
        let intent = "pi_\(id)"
        var shape = rng.int(0...9)
        // With Stripe down all night its inventory fails too: a never-recorded user would not even be a candidate.
        if down && shape == 8 { shape = 0 }
        var row =
            rng.chance(0.5)
            ? StripeWorld.row(id, tier: 1, "active", end: -Double(rng.int(1...20)), customer: customer)
            : StripeWorld.row(id, tier: 0, "expired", end: -Double(rng.int(1...40)), customer: customer)
        // Never recorded (CONTRACT "Whose purchase it is"): the row holds no tier and no customer; only Stripe's inventory names the
        // subscription, and its metadata names the user.
        if shape == 8 { row = StripeWorld.row(id, tier: 0, "none", end: -400, customer: nil) }
        await h.revenueCat.setSubscriber(SimulatedSubscriber(firstSeen: Harness.day(-300), subscriptions: []), for: id)
        let periodEnd = Double(rng.int(2...29))
        var subscription = StripeWorld.subscription(subscriptionID, "active", from: -1, to: periodEnd)
        subscription.latestInvoice = .paid(id: "in_\(id)", amount: 999, paymentIntent: intent, created: Harness.day(-1))
        func charge(refunded: Int64, dated: Bool = true) -> SimulatedStripeCharge {
            let refunds =
                refunded == 0 ? [] : [SimulatedStripeRefund(id: "re_\(id)", amount: refunded, created: dated ? Harness.day(-0.5) : nil)]
            return SimulatedStripeCharge(
                id: "ch_\(id)", paymentIntentID: intent, amount: 999, amountRefunded: refunded, created: Harness.day(-1), refunds: refunds)
        }
        func ended(_ status: String = "expired", end: Date?) -> Truth {
            .known(.ended(status, end: end, product: "prod_basic", source: "stripe"))
        }
        let paid = Truth.known(.entitled(1, end: periodEnd, product: "prod_basic", source: "stripe"))
        let truth: Truth
        var refund: String?
        var drift: String?
        var charges = [charge(refunded: 0)]
        var writes: [FactOrigin: String]?
        switch shape {
        case 0: truth = paid
        case 8:
            subscription.metadata = ["user_id": id]
            truth = paid
            writes = [.stripe: customer]
        case 9:
            // Another buyer's subscription (a transfer, a shared card): never this user's, the row untouched.
            subscription.metadata = ["user_id": "someone-else-\(id)"]
            truth = .unusable("Stripe names another buyer")
            drift = "ownership_conflict"
        case 1:
            charges = [charge(refunded: 999)]
            truth = ended("refunded", end: Harness.day(periodEnd))
            refund = intent
        case 2:
            charges = [charge(refunded: Int64(rng.int(1...998)))]
            truth = paid
        case 3:
            subscription = StripeWorld.subscription(subscriptionID, "canceled", from: -31, to: -1, endedAt: -1)
            truth = ended(end: Harness.day(-1))
        case 4:
            subscription.status = "past_due"
            subscription.latestInvoice = nil
            truth = .known(.entitled(1, "billing_issue", end: periodEnd, product: "prod_basic", source: "stripe"))
        case 5:
            await stripe.setFault(.status(500), for: intent)
            truth = .unusable("Stripe charges call failing")
        case 6:
            subscription = StripeWorld.subscription(subscriptionID, "active", from: -1, to: periodEnd, livemode: false)
            charges = []
            truth = row.currentTier > 0 ? .unusable("livemode: false is no evidence about the row's line") : ended(end: row.endDate)
            drift = row.currentTier > 0 ? "unknown_at_source" : "sandbox_ignored"
        default:
            charges = [charge(refunded: 999, dated: false)]
            truth = .unusable("a full Stripe refund nobody dated")
        }
        await stripe.setSubscriptions([subscription], forCustomer: customer)
        await stripe.addCharges(charges)
        if rng.chance(0.2) { await stripe.setFault(rng.chance(0.5) ? .status(503) : .rateLimited, for: customer, times: 1) }
        // Stripe down all night: whatever its data would say, nothing from it can be used.
        if down { return Generated(row: row, truth: .unusable("Stripe down all night"), refund: nil) }
        return Generated(row: row, truth: truth, refund: refund, drift: drift, writes: writes)
    }
}
