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

/// A feed window claims only what was read (docs/CONTRACT.md, Which users a run asks about): it ends no later than
/// the instant the feed was read up to (the wall clock at the read when `--as-of` is ahead of it, as the 15-minute
/// margin allows), and a window with nothing left to read is not requested: no failure, exit 0.
@Suite("Feed windows end at the read", .serialized, .enabled(if: Harness.isEnabled, Harness.skip), .timeLimit(.minutes(3)))
struct FeedReadInstantTests {
    /// The `until` recorded for `runID`'s App Store window.
    static func recordedUntil(_ h: Harness, _ runID: String) async throws -> Date? {
        try await TestDatabase.scalar(
            h.client, "select until from reconcile_feed_windows where run_id = \(runID) and feed = 'app_store'", as: Date.self)
    }

    @Test("a run at as-of = now + 10 min covers the feed up to its read; a refund signed after it is read by the rerun (exit 0)")
    func futureAsOfCoversOnlyTheRead() async throws {
        try await Harness.with(apple: true, revenueCat: false) { h in
            let started = Date()
            let asOf = started.addingTimeInterval(600)
            try await h.db.insertUsers([
                UserRow(
                    id: "f-refund", currentTier: 1, status: "active", endDate: asOf.addingTimeInterval(200 * 86_400),
                    source: "apple_iap", productID: "premium_monthly", originalTransactionID: "7401", autoRenew: true)
            ])
            let first = try await h.run {
                $0.asOf = asOf
                $0.maxDowngradeRatio = 1  // the one tier holder loses it: no valve
            }
            let finished = Date()
            #expect(first.exitStatus == .ok)
            let read = try #require(try await Self.recordedUntil(h, first.summary.runID))
            #expect(read >= started.addingTimeInterval(-0.001) && read <= finished, "the window ends at the read, \(read)")
            #expect(read < asOf, "never at the future as-of")
            let line = try #require(first.summary.feeds?["app_store"])
            #expect(line.until == ISO8601.string(read) && line.complete, "\(line)")

            // Apple signs a refund after that read, before as-of.
            let refunded = Date().addingTimeInterval(0.01)
            await h.appStore.setScenario(
                AppStoreScenario(
                    originalTransactionID: "7401", productID: "premium_monthly", status: 5,
                    purchaseDate: refunded.addingTimeInterval(-60 * 86_400), expiresDate: asOf.addingTimeInterval(200 * 86_400),
                    revocationDate: refunded, revocationReason: 0))
            await h.history.add(AppleHistoryNotification(type: "REFUND", originalTransactionID: "7401", sentAt: refunded))
            try await Task.sleep(for: .milliseconds(50))

            let second = try await h.run {
                $0.asOf = asOf
                $0.maxDowngradeRatio = 1
            }
            #expect(second.exitStatus == .ok, "no empty window asked for, no failed feed")
            let again = try #require(second.summary.feeds?["app_store"])
            #expect(again.since == ISO8601.string(read) && again.complete && again.error == nil, "\(again)")
            let reread = try #require(try await Self.recordedUntil(h, second.summary.runID))
            #expect(reread > read && reread < asOf)
            let row = try h.report(second)["f-refund"]
            #expect(
                row?.candidateReason == ["apple_notification"] && row?.drift.contains("missed_refund") == true, "\(String(describing: row))"
            )
            let user = try #require(try await h.user("f-refund"))
            #expect(user.currentTier == 0 && user.statusText == "refunded", "the refund signed between the two reads is found")
        }
    }

    @Test("a rerun at the same past as-of has nothing left to read: the feed is not asked, the window is no failure (exit 0)")
    func emptyWindowIsNotRequested() async throws {
        try await Harness.with(apple: true, revenueCat: false) { h in
            let first = try await h.run()
            #expect(first.exitStatus == .ok)
            let asked = await h.history.requests()
            #expect(asked > 0)
            let second = try await h.run()
            #expect(second.exitStatus == .ok)
            #expect(await h.history.requests() == asked, "an empty window [as-of, as-of) is not requested")
            let line = try #require(second.summary.feeds?["app_store"])
            #expect(line.since == ISO8601.string(Harness.asOf) && line.until == line.since, "\(line)")
            #expect(line.complete && line.error == nil && line.entries == 0)
        }
    }
}
