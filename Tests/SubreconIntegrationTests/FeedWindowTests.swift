import Foundation
import PostgresNIO
import StoreSimulator
import SubreconApp
import SubreconCore
import SubreconDatabase
import SubreconJob
import SubreconPorts
import SubreconReports
import Testing

/// A feed window is never lost (CONTRACT "Hostile answers and bounded work"): a window not read to its end, or read by a run that never
/// completed, is read again by the next nightly run (at most 30 days back); summary.json says what each feed covered.
@Suite("Store feed windows are never lost", .serialized, .enabled(if: Harness.isEnabled, Harness.skip))
struct FeedWindowTests {
    /// A row with a paid period months away, refunded on `refundDay` (at most a day before as-of: the simulated
    /// chain's validity): only Apple's history names it.
    static func seedRefund(_ h: Harness, _ id: String, txn: String, refundDay: Double) async throws {
        try await h.db.insertUsers([h.row(id, tier: 1, "active", end: 300, txn: txn)])
        await h.appStore.setScenario(
            AppStoreScenario(
                originalTransactionID: txn, productID: "premium_monthly", status: 5, purchaseDate: Harness.day(-60),
                expiresDate: Harness.day(300), revocationDate: Harness.day(refundDay), revocationReason: 0))
        await h.history.add(AppleHistoryNotification(type: "REFUND", originalTransactionID: txn, sentAt: Harness.day(refundDay)))
    }

    /// The `feeds.<source>` object of the run's summary.json, as written.
    static func feedJSON(_ result: RunResult, _ source: String) throws -> [String: Any] {
        let data = try Data(contentsOf: result.folder.appendingPathComponent("summary.json"))
        let summary = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let feeds = try #require(summary["feeds"] as? [String: Any])
        return try #require(feeds[source] as? [String: Any])
    }

    @Test("night 1's history answers 500 all night: not covered; night 2 reads from night 1's start and finds the refund")
    func failedNightIsReadAgain() async throws {
        try await Harness.with(apple: true, revenueCat: false) { h in
            try await Self.seedRefund(h, "w-refund", txn: "7001", refundDay: -1)
            await h.history.failNext(status: 500, times: 1_000)
            let first = try await h.run { $0.maxDowngradeRatio = 1 }
            #expect(first.exitStatus == .userErrors)
            let one = try Self.feedJSON(first, "app_store")
            #expect(one["complete"] as? Bool == false)
            #expect((one["error"] as? String)?.contains("notification history") == true)
            #expect(one["since"] as? String == ISO8601.string(Harness.day(-3)) && one["until"] as? String == ISO8601.string(Harness.asOf))
            #expect(try await h.user("w-refund")?.currentTier == 1, "nothing known yet")

            await h.history.failNext(status: 500, times: 0)
            let second = try await h.run {
                $0.asOf = Harness.day(1)
                $0.maxDowngradeRatio = 1
            }
            #expect(second.exitStatus == .ok)
            let two = try Self.feedJSON(second, "app_store")
            #expect(two["since"] as? String == ISO8601.string(Harness.day(-3)), "from night 1's start, not night 1's end")
            #expect(two["until"] as? String == ISO8601.string(Harness.day(1)))
            #expect(two["complete"] as? Bool == true)
            let row = try h.report(second)["w-refund"]
            #expect(
                row?.candidateReason == ["apple_notification"] && row?.drift.contains("missed_refund") == true, "\(String(describing: row))"
            )
            let refunded = try #require(try await h.user("w-refund"))
            #expect(refunded.currentTier == 0 && refunded.statusText == "refunded")

            let third = try await h.run {
                $0.asOf = Harness.day(2)
                $0.maxDowngradeRatio = 1
            }
            #expect(third.summary.feeds?["app_store"]?.since == ISO8601.string(Harness.day(1)), "covered up to night 2's end")
        }
    }

    @Test("a run that dies during the feed phase covers nothing: the next night reads its window again")
    func diedDuringFeedPhase() async throws {
        try await Harness.with(apple: true, revenueCat: false) { h in
            try await Self.seedRefund(h, "k-refund", txn: "7101", refundDay: -1)
            // The feed is read to its end, then recording the users it names fails: the run dies in its feed phase.
            try await h.client.query(
                """
                create function feed_phase_dies() returns trigger language plpgsql as $$ \
                begin raise exception 'the run dies in its feed phase'; end $$
                """, logger: h.logger)
            try await h.client.query(
                """
                create trigger feed_phase_dies before insert on reconcile_run_candidates \
                for each row execute function feed_phase_dies()
                """, logger: h.logger)
            do {
                let result = try await h.run { $0.maxDowngradeRatio = 1 }
                Issue.record("the run should have died in its feed phase, ended \(result.exitStatus)")
            } catch {}
            #expect(await h.history.requests() > 0, "the feed was read")
            #expect(try await h.count("select count(*)::int from reconcile_feed_windows where not complete") == 1)
            try await h.client.query("drop trigger feed_phase_dies on reconcile_run_candidates", logger: h.logger)
            #expect(try await h.count("select count(*)::int from reconcile_feed_windows where complete") == 0)
            #expect(try await h.user("k-refund")?.currentTier == 1)

            let next = try await h.run {
                $0.asOf = Harness.day(1)
                $0.maxDowngradeRatio = 1
            }
            #expect(next.summary.feeds?["app_store"]?.since == ISO8601.string(Harness.day(-3)))
            #expect(try await h.user("k-refund")?.currentTier == 0, "the refund inside the lost window is found")
        }
    }

    @Test("the window reaches back at most 30 days, however long ago the first uncovered instant is")
    func thirtyDayCap() async throws {
        try await Harness.with(apple: true, revenueCat: false) { h in
            // (The simulated Apple chain is valid from a day before as-of: older notifications could not be verified.)
            try await Self.seedRefund(h, "c-recent", txn: "7202", refundDay: -1)
            await h.history.failNext(status: 500, times: 1_000)
            let first = try await h.run { $0.asOf = Harness.day(-40) }
            #expect(first.summary.feeds?["app_store"]?.complete == false)
            await h.history.failNext(status: 500, times: 0)
            let second = try await h.run { $0.maxDowngradeRatio = 1 }
            #expect(second.summary.feeds?["app_store"]?.since == ISO8601.string(Harness.day(-30)))
            #expect(second.summary.feeds?["app_store"]?.complete == true)
            #expect(second.summary.feeds?["app_store"]?.until == ISO8601.string(Harness.asOf))
            #expect(try await h.user("c-recent")?.currentTier == 0)
        }
    }

    @Test("a dry run records no window: the next nightly run reads from where it would have")
    func dryRunRecordsNoWindow() async throws {
        try await Harness.with(apple: true, revenueCat: false) { h in
            try await Self.seedRefund(h, "d-refund", txn: "7301", refundDay: -1)
            let dry = try await h.run { $0.dryRun = true }
            #expect(dry.summary.feeds?["app_store"]?.complete == true)
            #expect(try await h.count("select count(*)::int from reconcile_feed_windows") == 0)
        }
    }
}
