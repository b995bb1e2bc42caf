import Foundation
import StoreSimulator
import SubreconCore
import SubreconJob
import SubreconPorts
import SubreconReports
import SubreconTestSupport
import SubreconTestWorld
import Testing

/// End to end over loopback and PostgreSQL: facts about different purchase lines are never
/// merged (CONTRACT "Whose purchase it is"), a Google void is a refund of its line (CONTRACT "Sources and the decision"), and columns keep their meaning (CONTRACT "Database").
@Suite(
    "Purchase lines in the nightly run", .serialized,
    .timeLimit(.minutes(3)))
struct PurchaseLineJobTests {
    @Test(
        "a Google resubscription: the row's old token is EXPIRED or 410, RevenueCat reports the new purchase active: tier kept",
        arguments: JobWorld.backends)
    func googleResubscription(_ backend: WorldBackend) async throws {
        try await GoogleWorld.with(backend, revenueCat: true) { h, google in
            for id in ["rs-expired", "rs-gone"] {
                try await h.db.insertUsers([GoogleWorld.row(id, end: -1)])
                await h.revenueCat.setSubscriber(
                    GoogleWorld.revenueCat(purchased: -1, expires: 29, order: "GPA.2000-0000-0000-00001..0"), for: id)
            }
            await google.setPurchase(
                GoogleWorld.line("EXPIRED", start: -90, expiry: -1, order: "GPA.1000-0000-0000-00001..2"), token: "tok-rs-expired")
            await google.setGone("tok-rs-gone")

            let result = try await h.run { $0.maxDowngradeRatio = 1 }
            let rows = try h.report(result)
            for id in ["rs-expired", "rs-gone"] {
                let user = try #require(try await h.user(id))
                #expect(user.currentTier == 1 && user.statusText == "active", "\(id): the new line entitles")
                #expect(user.endDate == JobWorld.day(29), "\(id): the new line's end, never NULL")
                #expect(rows[id]?.action == "extend", "\(id): \(rows[id]?.action ?? "")")
                #expect(rows[id]?.drift.contains("source_conflict") == false, "\(id): another line is no conflict")
                #expect(try await h.intents(id) == 0, "\(id)")
            }
        }
    }

    /// A Google line of `tok-<id>` that ended yesterday, its order voided the day before: RevenueCat has not seen the
    /// refund (its entry of the line simply ended), Google's answer says `EXPIRED`, its voided purchases name it.
    static func voidedLine(_ id: String, order: String, _ h: JobWorld, _ google: GooglePlaySimulator) async {
        await h.revenueCat.setSubscriber(GoogleWorld.revenueCat(purchased: -60, expires: -1, order: order), for: id)
        await google.setPurchase(GoogleWorld.line("EXPIRED", start: -60, expiry: -1, order: order), token: "tok-" + id)
        await google.addVoided(
            SimulatedVoidedPurchase(purchaseToken: "tok-" + id, orderID: order, voidedTime: JobWorld.day(-1), isSubscription: true))
    }

    @Test(
        "a Google void names the line: with RevenueCat too, the user ends refunded, intent refunded, counted", arguments: JobWorld.backends)
    func googleVoidWithRevenueCat(_ backend: WorldBackend) async throws {
        try await GoogleWorld.with(backend, revenueCat: true) { h, google in
            try await h.db.insertUsers([GoogleWorld.row("vr-1", end: 300)])
            await Self.voidedLine("vr-1", order: "GPA.3000-0000-0000-00001..1", h, google)

            let result = try await h.run { $0.maxDowngradeRatio = 1 }
            let rows = try h.report(result)
            let user = try #require(try await h.user("vr-1"))
            #expect(user.currentTier == 0 && user.statusText == "refunded")
            #expect(rows["vr-1"]?.drift.contains("missed_refund") == true, "\(rows["vr-1"]?.drift ?? [])")
            #expect(rows["vr-1"]?.pushIntent == ["refunded"])
            #expect(try await h.db.keptRefunds().count { $0.userID == "vr-1" } == 1, "one refund, feed and lookup")
        }
    }

    @Test("a Google void read on a night the user's lookup failed still refunds the line on a later night", arguments: JobWorld.backends)
    func googleVoidOfAnEarlierNight(_ backend: WorldBackend) async throws {
        try await GoogleWorld.with(backend, revenueCat: true) { h, google in
            try await h.db.insertUsers([GoogleWorld.row("vl-1", end: -1)])
            await Self.voidedLine("vl-1", order: "GPA.3100-0000-0000-00001..1", h, google)
            // Night 1: the feed reads the void (kept in refunds_seen), Google's answer about the token fails.
            await google.setFault(.status(500), token: "tok-vl-1")
            let first = try await h.run { $0.maxDowngradeRatio = 1 }
            #expect(try h.report(first)["vl-1"]?.drift.contains("fetch_error") == true)
            #expect(try await h.user("vl-1")?.currentTier == 1, "untouched on a fetch error")
            #expect(try await h.db.keptRefunds().count { $0.userID == "vl-1" } == 1)

            // Night 2: the feed's window is past the void; Google's answer says only EXPIRED.
            await google.clearFaults(token: "tok-vl-1")
            let second = try await h.run {
                $0.maxDowngradeRatio = 1
                $0.asOf = JobWorld.day(1)
            }
            let row = try #require(try h.report(second)["vl-1"])
            let user = try #require(try await h.user("vl-1"))
            #expect(user.currentTier == 0 && user.statusText == "refunded", "\(user.statusText)")
            #expect(row.pushIntent == ["refunded"], "\(row.pushIntent)")
            #expect(try await h.db.keptRefunds().count { $0.userID == "vl-1" } == 1, "kept once")
        }
    }

    @Test("a Stripe user's change never writes the subscription id into iap_original_transaction_id", arguments: JobWorld.backends)
    func stripeKeepsAppleColumn(_ backend: WorldBackend) async throws {
        try await StripeWorld.with(backend) { h, stripe in
            var kept = StripeWorld.row("sc-kept", tier: 1, "active", end: -2, customer: "cus_kept")
            kept.originalTransactionID = "2000000111"
            let empty = StripeWorld.row("sc-empty", tier: 1, "active", end: -2, customer: "cus_empty")
            try await h.db.insertUsers([kept, empty])
            await stripe.setSubscriptions([StripeWorld.subscription("sub_kept", "active", from: -2, to: 28)], forCustomer: "cus_kept")
            await stripe.setSubscriptions([StripeWorld.subscription("sub_empty", "active", from: -2, to: 28)], forCustomer: "cus_empty")

            let result = try await h.run()
            let rows = try h.report(result)
            for (id, expected) in [("sc-kept", "2000000111"), ("sc-empty", nil)] as [(String, String?)] {
                let user = try #require(try await h.user(id))
                #expect(rows[id]?.action == "extend", "\(id)")
                #expect(user.endDate == JobWorld.day(28), "\(id)")
                #expect(user.originalTransactionID == expected, "\(id): \(user.originalTransactionID ?? "NULL")")
            }
        }
    }
}
