import Foundation
import StoreSimulator
import SubreconCore
import SubreconPorts
import SubreconTestKit

extension RandomizedNightTests {
    /// The one-time product every store sells in the randomized night (lifetime, tier 3).
    static let lifetimeProduct = "pro.lifetime"

    /// Whose purchase a generated one-time line is: the user's own (its id, or for Apple its `account_token` in
    /// another case), another user's, nobody's, or the user's id in another case (another account but for Apple).
    enum OneTimeBuyer: CaseIterable { case own, other, nobody, caseVariant }

    /// One user holding a one-time (lifetime) line of a random store whose buyer is the user, another user, nobody
    /// or a case variant (CONTRACT "Whose purchase it is"): only a line naming the user (an Apple token in any case)
    /// or nobody restores the lifetime tier; another account leaves the row untouched (`ownership_conflict`).
    static func generateOneTime(
        id: String, index: Int, rng: inout SeededRandom, harness h: Harness, stripe: StripeSimulator, google: GooglePlaySimulator,
        stripeDown: Bool
    ) async -> Generated {
        let buyer = rng.pick(OneTimeBuyer.allCases)
        // RevenueCat knows the user and lists nothing: the store's answer decides.
        await h.revenueCat.setSubscriber(SimulatedSubscriber(firstSeen: Harness.day(-300), subscriptions: []), for: id)
        let token = String(format: "3c2b1a00-7a2b-4c3d-9e8f-%012d", index)
        let store = rng.int(0...2)
        var row = UserRow(
            id: id, currentTier: 0, status: "expired", endDate: Harness.day(-Double(rng.int(1...30))), productID: lifetimeProduct,
            autoRenew: false)
        let named: String?
        switch buyer {
        case .own: named = store == 0 ? token.uppercased() : id
        case .other: named = store == 0 ? "0b7e3c1d-0000-4000-8000-\(String(format: "%012d", index))" : "someone-else-\(id)"
        case .nobody: named = nil
        case .caseVariant: named = store == 0 ? token.uppercased() : id.uppercased()
        }
        // Apple's token is a UUID compared without case; every other account exactly.
        let entitles = buyer == .own || buyer == .nobody || (buyer == .caseVariant && store == 0)
        let source: String
        switch store {
        case 0:
            source = "apple_iap"
            row.source = source
            row.originalTransactionID = String(format: "6%06d", index)
            var purchase = AppleNonConsumableScenario(
                originalTransactionID: String(format: "6%06d", index), productID: lifetimeProduct, purchaseDate: Harness.day(-40))
            purchase.appAccountToken = named
            await h.appStore.addNonConsumable(purchase)
        case 1:
            source = "google_iap"
            row.source = source
            row.identifiers = [.googlePlay: "tok-one-\(id)"]
            var product = SimulatedPlayProduct(
                productID: lifetimeProduct, purchaseState: 0, purchaseTime: Harness.day(-40), orderID: "GPA.one-\(id)")
            product.obfuscatedAccountID = named
            await google.setProduct(product, token: "tok-one-\(id)")
        default:
            source = "stripe"
            row.source = source
            row.identifiers = [.stripe: "cus_\(id)"]
            var session = SimulatedStripeCheckoutSession(
                id: "cs_\(id)", created: Harness.day(-40), paymentIntentID: "pi_one_\(id)",
                lineItems: [SimulatedStripeLineItem(id: "li_\(id)", priceID: "price_lifetime", productID: lifetimeProduct)])
            if let named, rng.chance(0.5) {
                session.metadata = ["user_id": named]
            } else {
                session.clientReferenceID = named
            }
            await stripe.setCheckoutSessions([session], forCustomer: "cus_\(id)")
            await stripe.addCharges([
                SimulatedStripeCharge(
                    id: "ch_one_\(id)", paymentIntentID: "pi_one_\(id)", amount: 4999, amountRefunded: 0, created: Harness.day(-40),
                    refunds: [])
            ])
            if stripeDown { return Generated(row: row, truth: .unusable("Stripe down all night")) }
        }
        guard entitles else {
            return Generated(row: row, truth: .unusable("the store names another buyer (\(buyer))"), drift: "ownership_conflict")
        }
        let truth = Truth.known(Expected(tier: 3, status: "active", end: nil, grace: nil, product: lifetimeProduct, source: source))
        var generated = Generated(row: row, truth: truth, linesEntitle: 3)
        if store == 0 { generated.accountToken = token }
        return generated
    }

    /// A RevenueCat transfer (CONTRACT "Whose purchase it is"): the holder's row names an App Store line, RevenueCat
    /// lists it under the new owner (a free row), and Apple's signed transaction names the owner's account or nobody.
    /// The owner is restored from the line with its original transaction written into their row; the holder is
    /// `ownership_conflict`, untouched; so is a second holder whose row holds no tier at all (tier 0, status `none`, no
    /// end date: a lost first webhook naming the line), read whatever its tier. Returns the three users.
    static func generateTransfer(index: Int, harness h: Harness) async -> [(String, Generated)] {
        let holder = String(format: "n-%03d-a", index)
        let owner = String(format: "n-%03d-b", index)
        let freeHolder = String(format: "n-%03d-c", index)
        let original = String(format: "7%06d", index)
        let token = String(format: "4d5e6f00-7a2b-4c3d-9e8f-%012d", index)
        let holderRow = h.row(holder, tier: 1, "active", end: -1, product: "premium_monthly", txn: original)
        var ownerRow = h.row(owner, tier: 0, "expired", end: -5, product: "premium_monthly")
        ownerRow.productID = "premium_monthly"
        var scenario = AppStoreScenario(
            originalTransactionID: original, productID: "premium_monthly", status: 1, purchaseDate: Harness.day(-1),
            expiresDate: Harness.day(29), price: 9990, currency: "USD")
        if index % 2 == 0 { scenario.appAccountToken = token }
        await h.appStore.setScenario(scenario)
        await h.revenueCat.setSubscriber(SimulatedSubscriber(firstSeen: Harness.day(-300), subscriptions: []), for: holder)
        await h.revenueCat.setSubscriber(SimulatedSubscriber(firstSeen: Harness.day(-300), subscriptions: []), for: freeHolder)
        await h.revenueCat.setSubscriber(
            SimulatedSubscriber(
                firstSeen: Harness.day(-300),
                subscriptions: [Harness.subscription("premium_monthly", purchased: -1, expires: 29, txn: original)]),
            for: owner)
        var holderCase = Generated(
            row: holderRow, truth: .unusable("RevenueCat lists the line under \(owner)"), drift: "ownership_conflict")
        holderCase.transferOwner = (
            owner, .known(.entitled(1, end: 29, product: "premium_monthly", source: "apple_iap"))
        )
        var ownerCase = Generated(
            row: ownerRow, truth: .known(.entitled(1, end: 29, product: "premium_monthly", source: "apple_iap")), linesEntitle: 1,
            appleWrite: original)
        if index % 2 == 0 { ownerCase.accountToken = token }
        var freeRow = h.row(freeHolder, tier: 0, "none", end: nil, txn: original)
        (freeRow.source, freeRow.productID, freeRow.autoRenew) = (nil, nil, nil)
        var freeCase = Generated(
            row: freeRow, truth: .unusable("RevenueCat lists the line under \(owner)"), drift: "ownership_conflict")
        freeCase.transferOwner = holderCase.transferOwner
        return [(holder, holderCase), (owner, ownerCase), (freeHolder, freeCase)]
    }
}
