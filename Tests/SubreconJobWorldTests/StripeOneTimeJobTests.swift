import Foundation
import StoreSimulator
import SubreconCore
import SubreconJob
import SubreconPorts
import SubreconReports
import SubreconTestSupport
import SubreconTestWorld
import Testing

/// Stripe one-time prices paid through Checkout (CONTRACT "Sources and the decision"): non-expiring purchases, refunded when their payment was
/// refunded in full. Real PostgreSQL, the loopback Stripe simulator, the job run through `Commands.run`.
@Suite("The job with Stripe one-time purchases", .serialized)
struct StripeOneTimeJobTests {
    static let key = "sk_test_StripeOneTimeKey0123456789"

    static func row(_ id: String, tier: Int, _ status: String, end: Double?) -> UserRow {
        UserRow(
            id: id, currentTier: tier, status: status, endDate: end.map(JobWorld.day), source: "stripe", productID: "prod_lifetime",
            autoRenew: false, identifiers: [.stripe: "cus_\(id)"])
    }

    static func lifetime(_ name: String, livemode: Bool = true) -> SimulatedStripeCheckoutSession {
        SimulatedStripeCheckoutSession(
            id: "cs_\(name)", livemode: livemode, created: JobWorld.day(-5), paymentIntentID: "pi_\(name)",
            lineItems: [SimulatedStripeLineItem(id: "li_\(name)", priceID: "price_lifetime", productID: "prod_lifetime")])
    }

    static func charge(_ name: String, refunded: Bool) -> SimulatedStripeCharge {
        SimulatedStripeCharge(
            id: "ch_\(name)", paymentIntentID: "pi_\(name)", amount: 4999, amountRefunded: refunded ? 4999 : 0,
            created: JobWorld.day(-5),
            refunds: refunded ? [SimulatedStripeRefund(id: "re_\(name)", amount: 4999, created: JobWorld.day(-1))] : [])
    }

    @Test(
        "a paid lifetime price restores or keeps the lifetime tier; a refunded one is taken away; test mode is no evidence",
        arguments: JobWorld.backends)
    func lifetimeNight(_ backend: WorldBackend) async throws {
        let stripe = StripeSimulator(apiKey: Self.key)
        let variables = ["STRIPE_API_KEY": Self.key, "STRIPE_BASE_URL": "{base}"]
        try await JobWorld.with(backend, revenueCat: false, routes: [stripe], extra: variables) { h in
            try await h.db.upsertProducts([.init(productID: "prod_basic", tier: 1), .init(productID: "prod_lifetime", tier: 3)])
            let rows = [
                Self.row("o-gets", tier: 0, "expired", end: -10), Self.row("o-keeps", tier: 3, "active", end: nil),
                Self.row("o-refunded", tier: 3, "active", end: nil), Self.row("o-sandbox", tier: 0, "expired", end: -10),
                Self.row("o-repeat", tier: 3, "active", end: nil), Self.row("o-nomore", tier: 3, "active", end: nil),
            ]
            try await h.db.insertUsers(rows)
            for (name, refunded, livemode) in [
                ("o-gets", false, true), ("o-keeps", false, true), ("o-refunded", true, true), ("o-sandbox", false, false),
            ] {
                await stripe.setCheckoutSessions([Self.lifetime(name, livemode: livemode)], forCustomer: "cus_\(name)")
                await stripe.addCharges([Self.charge(name, refunded: refunded)])
            }
            // Hostile lists: the same page forever (a repeated cursor), and a page that does not say has_more.
            let page =
                #"{"object":"list","has_more":true,"data":[{"id":"cs_loop","mode":"payment","status":"complete","payment_status":"unpaid"}]}"#
            await stripe.setCheckoutSessions([], forCustomer: "cus_o-repeat")
            await stripe.setFault(
                .raw(status: 200, headers: [:], body: Data(page.utf8)), for: StripeSimulator.checkoutKey(customer: "cus_o-repeat"))
            await stripe.setCheckoutSessions([Self.lifetime("o-nomore")], forCustomer: "cus_o-nomore")
            await stripe.setFault(
                .raw(status: 200, headers: [:], body: Data(page.replacingOccurrences(of: #""has_more":true,"#, with: "").utf8)),
                for: StripeSimulator.checkoutKey(customer: "cus_o-nomore"))

            let result = try await h.run {
                $0.userIDs = rows.map(\.id)
                $0.mode = .backfill  // a lifetime row (no end date) is no nightly candidate
                $0.maxDowngradeRatio = 1
            }
            let report = try h.report(result)

            let gets = try #require(try await h.user("o-gets"))
            #expect(gets.currentTier == 3 && gets.statusText == "active" && gets.endDate == nil, "restored to lifetime")
            #expect(report["o-gets"]?.action == "restore")
            let keeps = try #require(try await h.user("o-keeps"))
            #expect(keeps.currentTier == 3 && keeps.statusText == "active" && keeps.endDate == nil)
            #expect(report["o-keeps"]?.truthTier == 3 && report["o-keeps"]?.error == nil)

            let refunded = try #require(try await h.user("o-refunded"))
            #expect(refunded.currentTier == 0 && refunded.statusText == "refunded", "a refunded lifetime purchase never entitles")

            let sandbox = try #require(try await h.user("o-sandbox"))
            #expect(sandbox.currentTier == 0, "a test-mode payment never entitles in a production run")
            #expect(report["o-sandbox"]?.drift.contains("sandbox_ignored") == true)

            for id in ["o-repeat", "o-nomore"] {
                let untouched = try #require(try await h.user(id))
                #expect(untouched.currentTier == 3 && untouched.statusText == "active", "\(id): an incomplete list changes nothing")
                #expect(report[id]?.action == "skipped" && report[id]?.error?.contains("incomplete") == true, "\(id)")
            }
            let asked = await stripe.recordedRequests().filter { $0.path == "/v1/checkout/sessions" }
            #expect(
                asked.allSatisfy {
                    $0.queryValues["expand[]"] == ["data.line_items", "data.customer"] && $0.query["status"] == "complete"
                })
        }
    }
}
