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

/// Drift the database cannot see (CONTRACT "Which users a run asks about"): Apple's notification history as a feed, and the rolling sweep.
@Suite("Store feeds and the rolling sweep", .serialized, .enabled(if: Harness.isEnabled, Harness.skip))
struct FeedAndSweepTests {
    func summary(_ result: RunResult) throws -> RunSummary {
        try JSONDecoder().decode(RunSummary.self, from: Data(contentsOf: result.folder.appendingPathComponent("summary.json")))
    }

    @Test("a mid-period refund only Apple's notification history reports is downgraded by the next nightly run")
    func appleFeedFindsAMidPeriodRefund() async throws {
        try await Harness.with(apple: true, revenueCat: false) { h in
            // Annual plan, refunded in month 2: the row says active for ten more months, no CONTRACT "Which users a run asks about" rule picks it.
            try await h.db.insertUsers([h.row("f-refund", tier: 1, "active", end: 300, txn: "5001")])
            await h.appStore.setScenario(
                AppStoreScenario(
                    originalTransactionID: "5001", productID: "premium_monthly", status: 5, purchaseDate: Harness.day(-60),
                    expiresDate: Harness.day(300), revocationDate: Harness.day(-1), revocationReason: 0))
            // Named by a notification too, but Apple says it is fine.
            try await h.db.insertUsers([h.row("f-fine", tier: 1, "active", end: 300, txn: "5002")])
            await h.appStore.setScenario(
                AppStoreScenario(
                    originalTransactionID: "5002", transactionID: "5102", productID: "premium_monthly", status: 1,
                    purchaseDate: Harness.day(-65), expiresDate: Harness.day(300)))
            // Not named by any notification: never asked.
            try await h.db.insertUsers([h.row("f-quiet", tier: 1, "active", end: 300, txn: "5003")])
            await h.history.setPageSize(2)
            let sent = Harness.day(-1)
            await h.history.add(AppleHistoryNotification(type: "REFUND", originalTransactionID: "5001", sentAt: sent))
            await h.history.add(AppleHistoryNotification(type: "DID_RENEW", originalTransactionID: "5002", sentAt: sent))
            await h.history.add(
                AppleHistoryNotification(type: "REFUND", originalTransactionID: "5001", sentAt: sent, deliveryFailed: true))
            await h.history.add(AppleHistoryNotification(type: "REFUND", originalTransactionID: "5999", sentAt: sent))  // no row
            await h.history.add(AppleHistoryNotification(type: "REFUND", originalTransactionID: "5003", sentAt: sent, forged: true))
            // Before the window:
            await h.history.add(AppleHistoryNotification(type: "REFUND", originalTransactionID: "5003", sentAt: Harness.day(-10)))

            let result = try await h.run { $0.maxDowngradeRatio = 1 }
            #expect(result.exitStatus == .ok)
            let rows = try h.report(result)
            #expect(Set(rows.keys) == ["f-refund", "f-fine"], "feed candidates only; the forged and out-of-window ones named nobody")
            let refunded = try #require(try await h.user("f-refund"))
            #expect(refunded.currentTier == 0 && refunded.statusText == "refunded")
            #expect(rows["f-refund"]?.candidateReason == ["apple_notification"])
            #expect(rows["f-refund"]?.drift.contains("missed_refund") == true)
            #expect(rows["f-fine"]?.action == "none")
            #expect(try await h.user("f-quiet")?.currentTier == 1)
            let feed = try #require(try summary(result).feeds?["app_store"])
            #expect(feed.entries == 4 && feed.rejected == 1, "4 verified notifications (one read twice), one forged")
            #expect(feed.matchedUsers == 2 && feed.unmatched == 1)
            #expect(feed.error == nil)
            #expect(feed.since == ISO8601.string(Harness.day(-3)), "a first run looks 3 days back")
            #expect(try summary(result).candidateReasons?["apple_notification"] == 2)

            // The next night: the window starts at this completed run; a rerun changes nothing.
            let again = try await h.run { $0.maxDowngradeRatio = 1 }
            #expect(try h.report(again)["f-refund"]?.action == "none")
        }
    }

    @Test("a dry run reads the feeds and sweeps, and writes nothing: not even its candidates")
    func dryRunWritesNothing() async throws {
        try await Harness.with(apple: true, revenueCat: false) { h in
            try await h.db.insertUsers([h.row("d-refund", tier: 1, "active", end: 300, txn: "5101")])
            await h.appStore.setScenario(
                AppStoreScenario(
                    originalTransactionID: "5101", productID: "premium_monthly", status: 5, purchaseDate: Harness.day(-60),
                    expiresDate: Harness.day(300), revocationDate: Harness.day(-1), revocationReason: 0))
            await h.history.add(AppleHistoryNotification(type: "REFUND", originalTransactionID: "5101", sentAt: Harness.day(-1)))
            await h.history.add(AppleHistoryNotification(type: "REFUND", originalTransactionID: "5199", sentAt: Harness.day(-1)))
            let result = try await h.run {
                $0.dryRun = true
                $0.sweepDays = 1  // every tier holder tonight
            }
            let rows = try h.report(result)
            #expect(rows["d-refund"]?.action == "downgrade" && rows["d-refund"]?.applied == false)
            #expect(rows["d-refund"]?.candidateReason == ["apple_notification", "sweep"])
            let feed = try #require(try summary(result).feeds?["app_store"])
            #expect(feed.matchedUsers == 1 && feed.unmatched == 1)
            #expect(try await h.user("d-refund")?.currentTier == 1)
            #expect(try await h.count("select count(*)::int from reconcile_run_candidates") == 0)
            #expect(try await h.count("select count(*)::int from reconcile_runs") == 0)
        }
    }

    @Test("a failing feed is reported, the night goes on, exit 1")
    func failingFeed() async throws {
        try await Harness.with(apple: true) { h in
            try await h.seed(h.row("f-expired", tier: 1, "active", end: -3), Harness.subscription(expires: -3))
            await h.history.failNext(status: 500, times: 1_000)
            let result = try await h.run { $0.maxDowngradeRatio = 1 }
            #expect(result.exitStatus == .userErrors)
            #expect(try await h.user("f-expired")?.currentTier == 0, "the rest of the night still ran")
            let feed = try #require(try summary(result).feeds?["app_store"])
            #expect(feed.error?.contains("notification history") == true)
        }
    }

    @Test("a lapsed user who resubscribed long after the lookback is found by Apple's SUBSCRIBED notification and restored")
    func resubscribedFoundByFeed() async throws {
        try await Harness.with(apple: true, revenueCat: false) { h in
            // Lapsed 200 days ago: outside the 60-day lookback, so no CONTRACT "Which users a run asks about" rule picks the row.
            try await h.db.insertUsers([h.row("r-back", tier: 0, "expired", end: -200, txn: "7001")])
            await h.appStore.setScenario(
                AppStoreScenario(
                    originalTransactionID: "7001", transactionID: "7101", productID: "premium_monthly", status: 1,
                    purchaseDate: Harness.day(-1), expiresDate: Harness.day(29)))
            await h.history.add(AppleHistoryNotification(type: "SUBSCRIBED", originalTransactionID: "7001", sentAt: Harness.day(-1)))
            let result = try await h.run { $0.sweepDays = 0 }
            let rows = try h.report(result)
            #expect(rows["r-back"]?.candidateReason == ["apple_notification"])
            #expect(rows["r-back"]?.action == "restore")
            #expect(try await h.user("r-back")?.currentTier == 1)
        }
    }

    @Test("over D consecutive nights every tier holder is swept exactly once; free users never")
    func sweepCoversEveryTierHolderOnce() async throws {
        try await Harness.with { h in
            let days = 5
            var holders: [String] = []
            for n in 0..<40 {
                let id = "s-\(n)"
                holders.append(id)
                try await h.seed(h.row(id, tier: 1, "active", end: 200), Harness.subscription(purchased: -10, expires: 200))
            }
            try await h.seed(h.row("s-free", tier: 0, "none", end: nil))
            var seen: [String: Int] = [:]
            for night in 0..<days {
                let result = try await h.run {
                    $0.sweepDays = days
                    $0.dryRun = true
                    $0.asOf = Harness.day(Double(night))
                }
                for (id, row) in try h.report(result) {
                    seen[id, default: 0] += 1
                    #expect(row.candidateReason == ["sweep"])
                    #expect(
                        CandidateQuery.sweepBucket(of: id, days: days)
                            == CandidateQuery.sweepNight(asOf: Harness.day(Double(night)), days: days),
                        "the SQL bucket and the Swift one agree")
                }
            }
            #expect(Set(seen.keys) == Set(holders), "every tier holder swept")
            #expect(seen.values.allSatisfy { $0 == 1 }, "each exactly once in D nights")
            #expect(seen["s-free"] == nil)
        }
    }

    @Test(
        "over D nights every row without a tier is swept exactly once (sweep_free), tier holders never by it; a paying user the database never recorded is found and restored"
    )
    func freeSweepCoversEveryFreeRowOnce() async throws {
        try await Harness.with { h in
            let days = 4
            var free: [String] = []
            for n in 0..<24 {
                let id = "f-\(n)"
                free.append(id)
                try await h.seed(h.row(id, tier: 0, "none", end: nil))
            }
            try await h.seed(h.row("f-holder", tier: 1, "active", end: 200), Harness.subscription(purchased: -10, expires: 200))
            var seen: [String: Int] = [:]
            for night in 0..<days {
                let result = try await h.run {
                    $0.sweepDays = 0
                    $0.sweepFreeDays = days
                    $0.dryRun = true
                    $0.asOf = Harness.day(Double(night))
                }
                for (id, row) in try h.report(result) {
                    seen[id, default: 0] += 1
                    #expect(row.candidateReason == ["sweep_free"])
                    #expect(
                        CandidateQuery.sweepFreeBucket(of: id, days: days)
                            == CandidateQuery.sweepNight(asOf: Harness.day(Double(night)), days: days),
                        "the SQL bucket and the Swift one agree")
                }
            }
            #expect(Set(seen.keys) == Set(free), "every row without a tier swept, the tier holder never by this sweep")
            #expect(seen.values.allSatisfy { $0 == 1 }, "each exactly once in D nights")

            // A paying user whose first webhook was lost: no tier in the database, an active subscription at the
            // source. The recorded (non-dry) path finds it on its night and restores the tier.
            let lost = try #require(
                (0..<10_000).lazy.map { "lost-\($0)" }.first {
                    CandidateQuery.sweepFreeBucket(of: $0, days: days) == CandidateQuery.sweepNight(asOf: Harness.day(0), days: days)
                })
            try await h.seed(h.row(lost, tier: 0, "none", end: nil), Harness.subscription(purchased: -3, expires: 27))
            let result = try await h.run {
                $0.sweepDays = 0
                $0.sweepFreeDays = days
                $0.asOf = Harness.day(0)
            }
            #expect(try h.report(result)[lost]?.candidateReason == ["sweep_free"])
            #expect(try await h.user(lost)?.currentTier == 1, "restored")
        }
    }
}
