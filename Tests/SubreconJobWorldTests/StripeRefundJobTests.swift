import Foundation
import StoreSimulator
import SubreconCore
import SubreconJob
import SubreconPorts
import SubreconReports
import SubreconTestSupport
import SubreconTestWorld
import Testing

/// Stripe refunds found in a lookup (CONTRACT "Finance figures"): the latest invoice's payments and charges, `amount_refunded`. Real
/// PostgreSQL, the loopback Stripe simulator, the job run through `Commands.run`.
@Suite("The job with Stripe refunds", .serialized)
struct StripeRefundJobTests {
    @Test(
        "a fully refunded current period is downgraded (paid price, refunds_seen keyed by pi_); a partial refund keeps the tier; a failed charges call is skipped; a rerun changes nothing",
        arguments: JobWorld.backends)
    func refundNight(_ backend: WorldBackend) async throws {
        try await StripeWorld.with(backend) { h, stripe in
            try await StripeWorld.seedRefundable(
                h.db.insertUsers, stripe, "full", amount: 1200, currency: "jpy", refunded: 1200,
                refunds: [
                    SimulatedStripeRefund(id: "re_full_1", amount: 200, created: JobWorld.day(-0.8)),
                    SimulatedStripeRefund(id: "re_full_2", amount: 1000, created: JobWorld.day(-0.5)),
                ])
            try await StripeWorld.seedRefundable(
                h.db.insertUsers, stripe, "partial", amount: 999, refunded: 300,
                refunds: [SimulatedStripeRefund(id: "re_partial", amount: 300, created: JobWorld.day(-0.5))])
            try await StripeWorld.seedRefundable(
                h.db.insertUsers, stripe, "failing", amount: 999, refunded: 999,
                refunds: [SimulatedStripeRefund(id: "re_failing", amount: 999, created: JobWorld.day(-0.5))])
            try await StripeWorld.seedRefundable(
                h.db.insertUsers, stripe, "undated", amount: 999, refunded: 999,
                refunds: [SimulatedStripeRefund(id: "re_undated", amount: 999, created: nil)])
            await stripe.setFault(.status(500), for: "pi_failing")

            let result = try await h.run { $0.maxDowngradeRatio = 1 }
            #expect(result.exitStatus == .userErrors, "the failed and the undated users are errors")
            let rows = try h.report(result)

            let full = try #require(try await h.user("r-full"))
            #expect(full.currentTier == 0 && full.statusText == "refunded")
            #expect(rows["r-full"]?.action == "downgrade" && rows["r-full"]?.applied == true)
            #expect(rows["r-full"]?.truthStatus == "refunded")
            #expect([rows["r-full"]?.priceAmount, rows["r-full"]?.priceCurrency, rows["r-full"]?.priceBasis] == ["1200", "JPY", "paid"])
            #expect(try await h.auditRows("r-full") == 1)
            #expect(try await h.intents("r-full") == 1)
            #expect(try await h.db.count(.refundsSeen(store: nil, transaction: nil)) == 1)
            #expect(
                try await h.db.keptRefunds()
                    == [
                        WorldRefund(
                            userID: "r-full", store: "stripe", transactionID: "pi_full", refundedAt: JobWorld.day(-0.5), amount: "1200",
                            currency: "JPY")
                    ], "keyed by the refunded payment intent, dated by the latest succeeded refund")

            let partial = try #require(try await h.user("r-partial"))
            #expect(partial.currentTier == 1 && partial.statusText == "active" && partial.endDate == JobWorld.day(29))
            #expect(
                rows["r-partial"]?.truthStatus == "active" && rows["r-partial"]?.action == "extend", "a partial refund is no revocation")
            #expect(try await h.db.keptRefunds().count { $0.userID == "r-partial" } == 0)

            for id in ["r-failing", "r-undated"] {
                let row = try #require(try await h.user(id))
                #expect(row.currentTier == 1 && row.statusText == "active" && row.endDate == JobWorld.day(-1), "\(id) untouched")
                #expect(rows[id]?.action == "skipped" && rows[id]?.applied == false, "\(id) skipped")
                #expect(rows[id]?.drift == ["fetch_error"], "\(id)")
                #expect(try await h.auditRows(id) == 0)
                #expect(try await h.intents(id) == 0)
            }
            #expect(rows["r-failing"]?.error?.contains("HTTP 500") == true)
            #expect(rows["r-undated"]?.error?.contains("no succeeded refund states when") == true)

            let paths = await stripe.recordedRequests().map(\.path)
            #expect(!paths.contains("/v1/invoice_payments"), "the payments came expanded on the subscriptions list")
            #expect(paths.filter { $0 == "/v1/charges" }.count >= 4, "one charges call per paid invoice payment (retries included)")
            #expect(result.summary.requests["stripe"]?.requests == paths.count, "the charges calls are counted in the request stats")

            // A rerun changes nothing: the refunded user stays refunded, one audit row, one intent, one refunds_seen row.
            let before = try await h.db.count(.audits(user: nil))
            let again = try await h.run { $0.maxDowngradeRatio = 1 }
            let rerun = try h.report(again)
            #expect(rerun.values.allSatisfy { $0.applied != true }, "nothing applied on a rerun")
            #expect(try await h.db.count(.audits(user: nil)) == before)
            #expect(try await h.user("r-full")?.statusText == "refunded")
            #expect(try await h.intents("r-full") == 1)
            #expect(try await h.user("r-partial")?.currentTier == 1)
            #expect(try await h.user("r-failing")?.currentTier == 1)
            #expect(try await h.db.count(.refundsSeen(store: nil, transaction: nil)) == 1)

            // Once Stripe answers the charges call, the failed user is judged like the first.
            await stripe.clearFaults()
            _ = try await h.run { $0.maxDowngradeRatio = 1 }
            #expect(try await h.user("r-failing")?.statusText == "refunded")
            #expect(
                try await h.db.count(.refundsSeen(store: "stripe", transaction: "pi_failing")) == 1)
            #expect(try await h.db.count(.refundsSeen(store: nil, transaction: nil)) == 2)
        }
    }

    @Test(
        "a canceled subscription and a trial invoice of amount 0 ask nothing more than the subscriptions list", arguments: JobWorld.backends
    )
    func nothingMoreAsked(_ backend: WorldBackend) async throws {
        try await StripeWorld.with(backend) { h, stripe in
            try await h.db.insertUsers([StripeWorld.row("r-trial", tier: 1, "active", end: -1, customer: "cus_trial")])
            var trial = StripeWorld.subscription("sub_trial", "trialing", from: -1, to: 13, amount: 0)
            trial.latestInvoice = .paid(id: "in_trial", amount: 0, paymentIntent: "pi_unused", created: JobWorld.day(-1))
            await stripe.setSubscriptions([trial], forCustomer: "cus_trial")
            try await StripeWorld.seedRefundable(
                h.db.insertUsers, stripe, "canceled", amount: 999, refunded: 999,
                refunds: [SimulatedStripeRefund(id: "re_c", amount: 999, created: JobWorld.day(-0.5))], status: "canceled")

            let result = try await h.run { $0.maxDowngradeRatio = 1 }
            let paths = await stripe.recordedRequests().map(\.path)
            #expect(paths.allSatisfy { $0 == "/v1/subscriptions" || $0 == "/v1/events" || $0 == "/v1/checkout/sessions" }, "\(paths)")
            #expect(try await h.user("r-trial")?.currentTier == 1)
            #expect(try await h.user("r-canceled")?.currentTier == 0)
            #expect(try await h.db.count(.refundsSeen(store: nil, transaction: nil)) == 0)
            #expect(result.exitStatus == .ok)
        }
    }

    @Test(
        "RevenueCat says active, Stripe states the period refunded in full (by customer and by RevenueCat's sub_ id): Stripe wins, source_conflict",
        arguments: JobWorld.backends)
    func refundRevenueCatMissed(_ backend: WorldBackend) async throws {
        try await StripeWorld.with(backend, revenueCat: true) { h, stripe in
            for (id, customer) in [("x-customer", "cus_x"), ("x-subid", nil)] as [(String, String?)] {
                let name = id.replacingOccurrences(of: "-", with: "_")
                try await h.db.insertUsers([StripeWorld.row(id, tier: 1, "active", end: -1, customer: customer)])
                await StripeWorld.revenueCatSaysActive(h, user: id, subscription: "sub_\(name)")
                var subscription = StripeWorld.subscription("sub_\(name)", "active", from: -1, to: 29)
                subscription.latestInvoice = .paid(id: "in_\(name)", amount: 999, paymentIntent: "pi_\(name)", created: JobWorld.day(-1))
                await stripe.setSubscriptions([subscription], forCustomer: customer ?? "cus_other_\(name)")
                await stripe.addCharges([
                    SimulatedStripeCharge(
                        id: "ch_\(name)", paymentIntentID: "pi_\(name)", amount: 999, amountRefunded: 999, created: JobWorld.day(-1),
                        refunds: [SimulatedStripeRefund(id: "re_\(name)", amount: 999, created: JobWorld.day(-0.25))])
                ])
            }
            let result = try await h.run { $0.maxDowngradeRatio = 1 }
            let rows = try h.report(result)
            for id in ["x-customer", "x-subid"] {
                let row = try #require(try await h.user(id))
                #expect(row.currentTier == 0 && row.statusText == "refunded", "\(id): Stripe's refund decides")
                #expect(rows[id]?.drift.contains("source_conflict") == true, "\(id)")
                #expect(rows[id]?.sources == ["revenuecat", "stripe"])
                #expect([rows[id]?.priceAmount, rows[id]?.priceCurrency, rows[id]?.priceBasis] == ["9.99", "USD", "paid"])
            }
            #expect(
                try await h.db.keptRefunds().count { $0.store == "stripe" && ["pi_x_customer", "pi_x_subid"].contains($0.transactionID) }
                    == 2)
            #expect(result.exitStatus == .ok)
        }
    }
}
