import Foundation
import PostgresNIO
import StoreSimulator
import SubreconApp
import SubreconCore
import SubreconDatabase
import SubreconJob
import SubreconPorts
import SubreconReports
import SubreconTestSupport
import Testing

/// The default feed window (no `--feeds-since`) as the code computes it now (`FeedWindowRule`, CONTRACT "Hostile answers and bounded work"):
/// per feed and shard, 3 days back on a shard's first run, then from where the feed's last covered window ended; a
/// feed never read on a shard that already completed nightly runs starts at the last completed nightly run's start
/// (at most 7 days back, never after as-of).
@Suite("The default feed window, per feed", .serialized, .enabled(if: Harness.isEnabled, Harness.skip), .timeLimit(.minutes(3)))
struct FeedDefaultWindowTests {
    @Test(
        "a shard's first run reads 3 days back; the next night starts where it ended; a feed configured later starts at the last completed nightly run"
    )
    func defaultWindows() async throws {
        let stripe = StripeSimulator(apiKey: StripeWorld.key)
        let extra = ["STRIPE_API_KEY": StripeWorld.key, "STRIPE_BASE_URL": "{base}"]
        try await Harness.with(apple: true, revenueCat: false, routes: [stripe], extra: extra) { h in
            var appleOnly = h.env.values
            appleOnly["STRIPE_API_KEY"] = nil
            appleOnly["STRIPE_BASE_URL"] = nil

            // Night 1, Apple only: nothing recorded yet, no completed run: 3 days back.
            let first = try await Commands.run(
                environment: ProcessEnvironment(appleOnly), options: h.options { $0.asOf = Harness.day(-1) }, logger: h.logger)
            let apple1 = try #require(first.summary.feeds?["app_store"])
            #expect(apple1.since == ISO8601.string(Harness.day(-4)) && apple1.until == ISO8601.string(Harness.day(-1)))
            #expect(apple1.complete)
            #expect(first.summary.feeds?["stripe"] == nil, "Stripe not configured yet")

            // Night 2, Stripe configured too: Apple goes on from night 1's end.
            let second = try await h.run()
            let apple2 = try #require(second.summary.feeds?["app_store"])
            #expect(apple2.since == ISO8601.string(Harness.day(-1)) && apple2.until == ISO8601.string(Harness.asOf))
            // Stripe was never read on this shard, which has a completed nightly run: its window starts at that run's
            // start (wall clock), at most 7 days back and never after as-of; not 3 days back.
            var starts: [Date] = []
            for try await started in try await h.client.query(
                "select started_at from reconcile_runs where id = \(first.summary.runID)"
            ).decode(Date.self) { starts.append(started) }
            let started = try #require(starts.first)
            let expected = min(max(started, Harness.asOf.addingTimeInterval(-7 * 86_400)), Harness.asOf)
            let stripe2 = try #require(second.summary.feeds?["stripe"])
            #expect(stripe2.since == ISO8601.string(expected), "\(stripe2.since) vs \(ISO8601.string(expected))")
            #expect(stripe2.until == ISO8601.string(Harness.asOf) && stripe2.complete)

            // Night 3: each feed goes on from where its own window ended.
            let third = try await h.run { $0.asOf = Harness.day(1) }
            #expect(third.summary.feeds?["app_store"]?.since == ISO8601.string(Harness.asOf))
            #expect(third.summary.feeds?["stripe"]?.since == ISO8601.string(Harness.asOf))
            #expect(third.summary.feeds?["stripe"]?.until == ISO8601.string(Harness.day(1)))
        }
    }
}
