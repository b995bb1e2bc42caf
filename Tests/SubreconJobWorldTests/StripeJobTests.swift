import Foundation
import StoreSimulator
import SubreconCore
import SubreconJob
import SubreconPorts
import SubreconReports
import SubreconTestSupport
import SubreconTestWorld
import Testing

/// Stripe as a source of its own and next to RevenueCat, over each backend: the loopback Stripe simulator, the job as
/// `run` composes it.
@Suite("The job with Stripe", .serialized, .timeLimit(.minutes(3)))
struct StripeJobTests {
    @Test(
        "a night with Stripe alone: renewals, restores, billing issue, cancellation, pause, trial, price-id mapping, sandbox untouched",
        arguments: JobWorld.backends)
    func stripeAlone(_ backend: WorldBackend) async throws {
        try await StripeWorld.with(backend) { h, stripe in
            let seeds: [(UserRow, [SimulatedStripeSubscription])] = [
                (
                    StripeWorld.row("s-extend", tier: 1, "active", end: -2, customer: "cus_extend"),
                    [StripeWorld.subscription("sub_extend", "active", from: -2, to: 28)]
                ),
                (
                    StripeWorld.row("s-restore", tier: 0, "expired", end: -10, customer: "cus_restore"),
                    [
                        StripeWorld.subscription("sub_old", "canceled", from: -40, to: -10, endedAt: -10),
                        StripeWorld.subscription("sub_restore", "active", from: -1, to: 29),
                    ]
                ),
                (
                    StripeWorld.row("s-pastdue", tier: 1, "active", end: -1, customer: "cus_pastdue"),
                    [StripeWorld.subscription("sub_pastdue", "past_due", from: -1, to: 29)]
                ),
                (
                    StripeWorld.row("s-canceled", tier: 1, "active", end: -1, customer: "cus_canceled"),
                    [StripeWorld.subscription("sub_canceled", "canceled", from: -31, to: -1, endedAt: -1)]
                ),
                (
                    StripeWorld.row("s-paused", tier: 1, "active", end: -1, customer: "cus_paused"),
                    [StripeWorld.subscription("sub_paused", "paused", from: -31, to: -1)]
                ),
                (
                    StripeWorld.row("s-trial", tier: 1, "active", end: -1, customer: "cus_trial"),
                    [StripeWorld.subscription("sub_trial", "trialing", from: -1, to: 13, cancelAtPeriodEnd: true, amount: 0)]
                ),
                (
                    StripeWorld.row("s-price", tier: 0, "expired", end: -3, customer: "cus_price", product: "price_pro_annual"),
                    [
                        StripeWorld.subscription(
                            "sub_price", "active", from: -1, to: 364, product: "prod_not_in_tiers", price: "price_pro_annual",
                            amount: 12000, currency: "jpy")
                    ]
                ),
                (
                    StripeWorld.row("s-sandbox", tier: 1, "active", end: -1, customer: "cus_sandbox"),
                    [StripeWorld.subscription("sub_sandbox", "active", from: -1, to: 29, livemode: false)]
                ),
            ]
            for (row, subscriptions) in seeds {
                try await h.db.insertUsers([row])
                await stripe.setSubscriptions(subscriptions, forCustomer: row.identifiers[.stripe]!)
            }

            let result = try await h.run { $0.maxDowngradeRatio = 1 }
            let rows = try h.report(result)

            let extended = try #require(try await h.user("s-extend"))
            #expect(extended.currentTier == 1 && extended.statusText == "active" && extended.endDate == JobWorld.day(28))
            #expect(rows["s-extend"]?.action == "extend")

            let restored = try #require(try await h.user("s-restore"))
            #expect(restored.currentTier == 1 && restored.statusText == "active" && restored.endDate == JobWorld.day(29))
            #expect(rows["s-restore"]?.action == "restore")

            let pastDue = try #require(try await h.user("s-pastdue"))
            #expect(pastDue.currentTier == 1 && pastDue.statusText == "billing_issue")
            #expect(rows["s-pastdue"]?.drift.contains("billing_issue_entered") == true)

            let canceled = try #require(try await h.user("s-canceled"))
            #expect(canceled.currentTier == 0 && canceled.statusText == "expired")
            #expect(rows["s-canceled"]?.action == "downgrade")
            #expect(try await h.intents("s-canceled") == 1, "a downgrade emits its push intent")

            let paused = try #require(try await h.user("s-paused"))
            #expect(paused.currentTier == 0 && paused.statusText == "paused")

            let trial = try #require(try await h.user("s-trial"))
            #expect(trial.currentTier == 1 && trial.statusText == "canceled" && trial.endDate == JobWorld.day(13))
            #expect(trial.autoRenew == false)

            let byPrice = try #require(try await h.user("s-price"))
            #expect(byPrice.currentTier == 2 && byPrice.endDate == JobWorld.day(364), "mapped by the price id")

            #expect(rows["s-sandbox"]?.drift.contains("sandbox_ignored") == true)
            let sandbox = try #require(try await h.user("s-sandbox"))
            // A test-mode subscription never entitles in a production run, nor is it evidence about the line that
            // granted the tier (CONTRACT "Whose purchase it is"): unknown_at_source, untouched.
            #expect(sandbox.currentTier == 1 && rows["s-sandbox"]?.action == "skipped")
            #expect(rows["s-sandbox"]?.drift.contains("unknown_at_source") == true)

            #expect(rows.values.allSatisfy { $0.store == "stripe" })
            #expect(rows.values.allSatisfy { $0.sources == ["stripe"] }, "drift.json names Stripe as the only source asked")
            let csv = try h.csvLines(result, "drift.csv")
            let column = try #require(csv.first?.split(separator: ",", omittingEmptySubsequences: false).firstIndex(of: "sources"))
            let extendLine = try #require(csv.first { $0.hasPrefix("\(result.summary.runID),s-extend,") })
            #expect(extendLine.split(separator: ",", omittingEmptySubsequences: false)[column] == "stripe")
            #expect(
                result.summary.requests["stripe"]?.requests == 2 * seeds.count + 1 + 3,
                "a subscriptions and a checkout sessions list per customer, one events page, the inventory's three status lists")
            #expect(result.summary.requests["revenuecat"] == nil)
            #expect(result.summary.sources["stripe"]?.contains("Stripe API") == true)
            #expect(result.summary.sources["stripe"]?.hasSuffix("; budget 20 req/s") == true, "the --stripe-rps default")
            #expect(result.exitStatus == .ok)
        }
    }

    @Test("5xx, 429, 401, an unknown customer and a malformed body leave the rows untouched and are reported", arguments: JobWorld.backends)
    func failures(_ backend: WorldBackend) async throws {
        try await StripeWorld.with(backend, extra: ["SUBRECON_HTTP_429_BUDGET_SECONDS": "0.3"]) { h, stripe in
            let ids = ["f-5xx", "f-429", "f-401", "f-unknown", "f-malformed"]
            for id in ids {
                let customer = "cus_" + id
                try await h.db.insertUsers([StripeWorld.row(id, tier: 1, "active", end: -1, customer: customer)])
                if id != "f-unknown" {
                    await stripe.setSubscriptions(
                        [StripeWorld.subscription("sub_\(id)", "canceled", from: -31, to: -1)], forCustomer: customer)
                }
            }
            await stripe.setFault(.status(500), for: "cus_f-5xx")
            await stripe.setFault(.rateLimited, for: "cus_f-429")
            await stripe.setFault(
                .raw(
                    status: 401, headers: [:],
                    body: Data(#"{"error":{"message":"Invalid API Key provided: sk_test_****","type":"invalid_request_error"}}"#.utf8)),
                for: "cus_f-401")
            await stripe.setFault(.malformedBody, for: "cus_f-malformed")

            let result = try await h.run { $0.maxDowngradeRatio = 1 }
            #expect(result.exitStatus == .userErrors)
            let rows = try h.report(result)
            for id in ids {
                let row = try #require(try await h.user(id))
                #expect(row.currentTier == 1 && row.statusText == "active" && row.endDate == JobWorld.day(-1), "\(id) untouched")
                #expect(rows[id]?.action == "skipped" && rows[id]?.applied == false, "\(id) skipped")
                #expect(rows[id]?.sources == ["stripe"], "\(id): Stripe was asked")
                #expect(try await h.auditRows(id) == 0)
                #expect(try await h.intents(id) == 0)
            }
            #expect(rows["f-5xx"]?.drift == ["fetch_error"])
            #expect(rows["f-5xx"]?.error?.contains("HTTP 500") == true)
            #expect(rows["f-429"]?.drift == ["fetch_error"])
            #expect(rows["f-429"]?.error?.contains("429") == true)
            #expect(rows["f-401"]?.drift == ["fetch_error"])
            #expect(rows["f-401"]?.error?.contains("STRIPE_API_KEY") == true)
            #expect(rows["f-malformed"]?.drift == ["fetch_error"])
            #expect(rows["f-unknown"]?.drift == ["unknown_at_source"])
            let report = try String(contentsOf: result.folder.appendingPathComponent("drift.json"), encoding: .utf8)
            #expect(!report.contains(StripeWorld.key), "the key never reaches a report")
        }
    }

    @Test(
        "RevenueCat says active, Stripe says canceled: Stripe wins, source_conflict (by customer, by RevenueCat's sub_ id, and by id when the customer's list lacks it)",
        arguments: JobWorld.backends)
    func stripeOverridesRevenueCat(_ backend: WorldBackend) async throws {
        try await StripeWorld.with(backend, revenueCat: true) { h, stripe in
            // c-elsewhere: the row's customer has no subscriptions; RevenueCat's sub_ id is asked about by id.
            await stripe.setSubscriptions([], forCustomer: "cus_empty")
            for (id, customer) in [("c-customer", "cus_conflict"), ("c-subid", nil), ("c-elsewhere", "cus_empty")] as [(String, String?)] {
                let subscriptionID = "sub_\(id)"
                try await h.db.insertUsers([StripeWorld.row(id, tier: 1, "active", end: -1, customer: customer)])
                await StripeWorld.revenueCatSaysActive(h, user: id, subscription: subscriptionID)
                let owner = customer == "cus_conflict" ? "cus_conflict" : "cus_other_\(id)"
                await stripe.setSubscriptions(
                    [StripeWorld.subscription(subscriptionID, "canceled", from: -31, to: -1, endedAt: -1)], forCustomer: owner)
            }

            let result = try await h.run {
                $0.maxDowngradeRatio = 1
                $0.requestsPerSecond[.stripe] = 7
            }
            #expect(result.summary.sources["stripe"]?.hasSuffix("; budget 7 req/s") == true)
            let rows = try h.report(result)
            for id in ["c-customer", "c-subid", "c-elsewhere"] {
                let row = try #require(try await h.user(id))
                #expect(row.currentTier == 0 && row.statusText == "expired", "\(id): Stripe's answer decides")
                #expect(rows[id]?.drift.contains("source_conflict") == true, "\(id)")
                #expect(rows[id]?.conflicts.first?.store == .stripe)
                #expect(rows[id]?.conflicts.first?.revenueCat.entitled == true)
                #expect(rows[id]?.conflicts.first?.storeView.entitled == false)
                #expect(rows[id]?.sources == ["revenuecat", "stripe"])
            }
            let paths = await stripe.recordedRequests().map(\.path)
            #expect(paths.contains("/v1/subscriptions/sub_c-subid"), "asked by RevenueCat's subscription id")
            #expect(paths.contains("/v1/subscriptions/sub_c-elsewhere"), "asked by id when the customer's list lacks it")
            #expect(!paths.contains("/v1/subscriptions/sub_c-customer"), "listed by customer, not asked again")
            #expect(
                result.summary.requests["stripe"]?.requests == 7 + 3,
                "4 lookups, 2 checkout sessions lists by customer, the events feed's page and the inventory's three lists")
        }
    }
}
