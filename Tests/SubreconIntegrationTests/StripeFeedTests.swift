import Foundation
import StoreSimulator
import SubreconApp
import SubreconCore
import SubreconDatabase
import SubreconJob
import SubreconPorts
import SubreconReports
import SubreconTestSupport
import Testing

/// Stripe's events feed in the nightly run (CONTRACT "Which users a run asks about"): real PostgreSQL, the loopback Stripe simulator's
/// `GET /v1/events`, the job run through `Commands.run`. The harness's first-run window is the 3 days before as-of.
@Suite("The Stripe events feed", .serialized, .enabled(if: Harness.isEnabled, Harness.skip))
struct StripeFeedTests {
    static func event(_ id: String, _ type: String, day: Double, customer: String?) -> SimulatedStripeEvent {
        SimulatedStripeEvent(id: id, type: type, created: Harness.day(day), customer: customer, status: "canceled")
    }

    /// A row `active` with a paid period months away: the CONTRACT "Which users a run asks about" rules never pick it.
    static func midPeriodRow(_ id: String, customer: String) -> UserRow {
        StripeWorld.row(id, tier: 1, "active", end: 120, customer: customer)
    }

    /// A subscription Stripe canceled yesterday, inside the period the row still believes paid.
    static func canceledYesterday(_ id: String) -> SimulatedStripeSubscription {
        StripeWorld.subscription(id, "canceled", from: -60, to: 120, endedAt: -1)
    }

    @Test("a cancellation only an event reports is found: the mid-period row is downgraded, candidate_reason stripe_event")
    func cancellationByEvent() async throws {
        try await Harness.withStripe { h, stripe in
            // Both rows look paid for 120 more days and Stripe canceled both; only f-event's customer has an event.
            try await h.db.insertUsers([
                Self.midPeriodRow("f-event", customer: "cus_event"), Self.midPeriodRow("f-silent", customer: "cus_silent"),
            ])
            await stripe.setSubscriptions([Self.canceledYesterday("sub_event")], forCustomer: "cus_event")
            await stripe.setSubscriptions([Self.canceledYesterday("sub_silent")], forCustomer: "cus_silent")
            await stripe.setEvents([
                Self.event("evt_deleted", "customer.subscription.deleted", day: -1, customer: "cus_event"),
                // The same customer twice (its refund too): asked once.
                Self.event("evt_refund", "charge.refunded", day: -1.5, customer: "cus_event"),
                // Outside the window (4 days back) and a type the feed does not ask for: neither names f-silent.
                Self.event("evt_old", "customer.subscription.deleted", day: -4, customer: "cus_silent"),
                Self.event("evt_invoice", "invoice.payment_failed", day: -1, customer: "cus_silent"),
            ])

            let result = try await h.run { $0.maxDowngradeRatio = 1 }
            #expect(result.exitStatus == .ok)
            let feed = try #require(result.summary.feeds?["stripe"])
            #expect(feed.error == nil)
            #expect(feed.entries == 2)
            #expect(feed.rejected == 0)
            #expect(feed.matchedUsers == 1)
            #expect(feed.unmatched == 0)
            #expect(feed.since == ISO8601.string(Harness.day(-3)) && feed.until == ISO8601.string(Harness.asOf))

            let downgraded = try #require(try await h.user("f-event"))
            #expect(downgraded.currentTier == 0 && downgraded.statusText == "expired")
            #expect(try await h.auditRows("f-event") == 1)
            let rows = try h.report(result)
            #expect(rows["f-event"]?.action == "downgrade")
            #expect(rows["f-event"]?.candidateReason == ["stripe_event"])
            let csv = try h.csvLines(result, "drift.csv")
            let header = try #require(csv.first?.split(separator: ",", omittingEmptySubsequences: false).map(String.init))
            let column = try #require(header.firstIndex(of: "candidate_reason"))
            let line = try #require(csv.first { $0.hasPrefix("\(result.summary.runID),f-event,") })
            #expect(line.split(separator: ",", omittingEmptySubsequences: false)[column] == "stripe_event")

            // Without an event the same drift stays invisible to the nightly run: f-silent is no candidate.
            #expect(rows["f-silent"] == nil)
            let silent = try #require(try await h.user("f-silent"))
            #expect(silent.currentTier == 1 && silent.statusText == "active" && silent.endDate == Harness.day(120))
            #expect(result.summary.candidates == 1)
            #expect(result.summary.candidateReasons?["stripe_event"] == 1)

            let events = await stripe.recordedRequests().filter { $0.path == "/v1/events" }
            #expect(events.count == 1)
            #expect(events.first?.query["created[gte]"] == String(Int64(Harness.day(-3).timeIntervalSince1970)))
            #expect(events.first?.query["created[lt]"] == String(Int64(Harness.asOf.timeIntervalSince1970)))
            #expect(
                result.summary.requests["stripe"]?.requests == 6,
                "one events page, one subscriptions and one checkout sessions list, and the inventory's three status lists")
            #expect(result.summary.sources["stripe"]?.contains("events feed (GET /v1/events)") == true)
        }
    }

    @Test("an event for a customer no row holds is counted as unmatched and nothing else happens")
    func unmatchedCustomer() async throws {
        try await Harness.withStripe { h, stripe in
            try await h.db.insertUsers([Self.midPeriodRow("f-bystander", customer: "cus_bystander")])
            await stripe.setSubscriptions([Self.canceledYesterday("sub_bystander")], forCustomer: "cus_bystander")
            await stripe.setEvents([
                Self.event("evt_stranger", "customer.subscription.deleted", day: -1, customer: "cus_stranger"),
                // A guest charge refunded: no customer to name; read (counted in entries), not acted on.
                Self.event("evt_guest", "charge.refunded", day: -2, customer: nil),
            ])

            let result = try await h.run { $0.maxDowngradeRatio = 1 }
            #expect(result.exitStatus == .ok)
            let feed = try #require(result.summary.feeds?["stripe"])
            #expect(feed.error == nil)
            #expect(feed.entries == 2)
            #expect(feed.unmatched == 1)
            #expect(feed.matchedUsers == 0)
            #expect(result.summary.candidates == 0)
            #expect(try h.report(result).isEmpty)
            let bystander = try #require(try await h.user("f-bystander"))
            #expect(bystander.currentTier == 1 && bystander.statusText == "active" && bystander.endDate == Harness.day(120))
            #expect(try await h.auditRows("f-bystander") == 0)
            let requests = await stripe.recordedRequests()
            #expect(requests.map(\.path) == ["/v1/events"] + Array(repeating: "/v1/subscriptions", count: 3), "no lookup for anyone")
            #expect(requests.dropFirst().allSatisfy { $0.query["customer"] == nil }, "only the inventory's three status lists")
        }
    }

    @Test("a failing events feed is reported in the summary, the rest of the night still runs, exit 1")
    func failingFeed() async throws {
        try await Harness.withStripe { h, stripe in
            // Due by the database's own account (paid period over): processed whatever the feed does.
            try await h.db.insertUsers([
                StripeWorld.row("f-due", tier: 1, "active", end: -1, customer: "cus_due"),
                Self.midPeriodRow("f-event", customer: "cus_event"),
            ])
            await stripe.setSubscriptions(
                [StripeWorld.subscription("sub_due", "canceled", from: -31, to: -1, endedAt: -1)], forCustomer: "cus_due")
            await stripe.setSubscriptions([Self.canceledYesterday("sub_event")], forCustomer: "cus_event")
            await stripe.setEvents([Self.event("evt_deleted", "customer.subscription.deleted", day: -1, customer: "cus_event")])
            await stripe.setFault(.status(500), for: StripeSimulator.eventsKey)

            let result = try await h.run { $0.maxDowngradeRatio = 1 }
            #expect(result.exitStatus == .userErrors)
            let feed = try #require(result.summary.feeds?["stripe"])
            let error = try #require(feed.error)
            #expect(error.contains("events feed") && error.contains("HTTP 500"))
            #expect(!error.contains(StripeWorld.key))
            #expect(feed.matchedUsers == 0 && feed.entries == 0)

            let due = try #require(try await h.user("f-due"))
            #expect(due.currentTier == 0 && due.statusText == "expired", "the rule candidates are still processed")
            let rows = try h.report(result)
            #expect(rows["f-due"]?.action == "downgrade")
            #expect(rows["f-due"]?.candidateReason == ["expired"])
            #expect(rows["f-event"] == nil, "the feed's entries were not read")
            let untouched = try #require(try await h.user("f-event"))
            #expect(untouched.currentTier == 1 && untouched.endDate == Harness.day(120))
            let events = await stripe.recordedRequests().filter { $0.path == "/v1/events" }
            #expect(events.count == 3, "SUBRECON_HTTP_MAX_ATTEMPTS=3, then the feed gives up")
        }
    }
}
