import Foundation
import StoreSimulator
import SubreconCore
import SubreconDatabase
import SubreconPorts
import SubreconReports
import SubreconTestSupport
import Testing

@testable import SubreconApp
@testable import SubreconJob

/// Google's voided purchases as a store feed in the nightly run (CONTRACT "Which users a run asks about"): the harness's first run reads
/// the window `[as-of − 3 days, as-of)`.
@Suite("The Google Play voided purchases feed in the nightly run", .serialized, .enabled(if: Harness.isEnabled, Harness.skip))
struct GooglePlayFeedTests {
    static func voided(_ token: String, at: Double, order: String? = nil, subscription: Bool = true) -> SimulatedVoidedPurchase {
        SimulatedVoidedPurchase(
            purchaseToken: token, orderID: order ?? "GPA.order-" + token, voidedTime: Harness.day(at), isSubscription: subscription)
    }

    @Test("a refund inside a paid period reported only by the feed ends the line refunded; a void matching no row is counted")
    func refundInsidePaidPeriod() async throws {
        try await GoogleHarness.with { h, google in
            // Refunded in month 2 of an annual plan: the row says active for 10 more months (no CONTRACT "Which users a run asks about" rule picks it).
            try await h.db.insertUsers([GoogleWorld.row("v-refunded", end: 300)])
            await google.setPurchase(GoogleWorld.play("EXPIRED", expiry: -1, start: -60), token: "tok-v-refunded")
            await google.addVoided(Self.voided("tok-v-refunded", at: -1))
            // Revoked and reported gone by subscriptionsv2: the same downgrade.
            try await h.db.insertUsers([GoogleWorld.row("v-gone", end: 200)])
            await google.setGone("tok-v-gone")
            await google.addVoided(Self.voided("tok-v-gone", at: -2))
            // Already lapsed by the rules and voided too: one candidate, both reasons.
            try await h.db.insertUsers([GoogleWorld.row("v-both", end: -2)])
            await google.setPurchase(GoogleWorld.play("EXPIRED", expiry: -2), token: "tok-v-both")
            await google.addVoided(Self.voided("tok-v-both", at: -1))
            // Voided before the window: not read, not a candidate.
            try await h.db.insertUsers([GoogleWorld.row("v-old", end: 300)])
            await google.setPurchase(GoogleWorld.play("EXPIRED", expiry: -5), token: "tok-v-old")
            await google.addVoided(Self.voided("tok-v-old", at: -5))
            // A paid row nobody names: not asked.
            try await h.db.insertUsers([GoogleWorld.row("v-quiet", end: 300)])
            await google.setPurchase(GoogleWorld.play("ACTIVE", expiry: 300), token: "tok-v-quiet")
            // A void matching no row: counted as unmatched, nothing else.
            await google.addVoided(Self.voided("tok-nobody", at: -1))
            // A one-time product's void of a token no row holds: read (type=1 lists both kinds), unmatched.
            await google.addVoided(Self.voided("tok-coins", at: -1, subscription: false))

            let result = try await h.run { $0.maxDowngradeRatio = 1 }
            #expect(result.exitStatus == .ok)
            let rows = try h.report(result)

            for id in ["v-refunded", "v-gone"] {
                let user = try #require(try await h.user(id))
                #expect(user.currentTier == 0 && user.statusText == "refunded", "\(id): \(user.statusText)")
                #expect(rows[id]?.pushIntent == ["refunded"], "\(id): \(rows[id]?.pushIntent ?? [])")
                #expect(user.endDate != nil, "\(id): a void or a 410 never makes the end date NULL")
                #expect(rows[id]?.action == "downgrade", "\(id)")
                #expect(rows[id]?.candidateReason == ["google_voided"], "\(id)")
                #expect(try await h.intents(id) == 1, "\(id)")
            }
            #expect(Set(rows["v-both"]?.candidateReason ?? []) == ["expired", "google_voided"])
            #expect(rows["v-both"]?.action == "downgrade")
            for id in ["v-old", "v-quiet"] {
                #expect(rows[id] == nil, "\(id) is no candidate")
                let user = try #require(try await h.user(id))
                #expect(user.currentTier == 1 && user.statusText == "active", "\(id) untouched")
            }

            let feed = try #require(result.summary.feeds?["google_play"])
            #expect(feed.error == nil)
            #expect(feed.entries == 5)
            #expect(feed.matchedUsers == 3)
            #expect(feed.unmatched == 2)
            #expect(result.summary.candidateReasons?["google_voided"] == 3)

            let csv = try h.csvLines(result, "drift.csv")
            #expect(csv.contains { $0.contains("v-refunded") && $0.contains("google_voided") })

            let queries = await google.voidedRequestQueries()
            #expect(queries.count == 1)
            #expect(queries.first?["type"] == "1")
            let asOf = Int64(Harness.asOf.timeIntervalSince1970 * 1000)
            #expect(queries.first?["endTime"] == String(asOf))
            #expect(queries.first?["startTime"] == String(asOf - 3 * 86_400_000))
            #expect(await google.counters().apiRequests == 3, "v-refunded, v-gone and v-both asked; v-old and v-quiet not")
            #expect(await google.counters().tokensIssued == 1, "the feed and the lookups share one access token")
        }
    }

    @Test("a feed read over several pages names every user")
    func severalPages() async throws {
        try await GoogleHarness.with { h, google in
            await google.setVoidedPageSize(2)
            for n in 0..<5 {
                let id = "p-\(n)"
                try await h.db.insertUsers([GoogleWorld.row(id, end: 300)])
                await google.setPurchase(GoogleWorld.play("EXPIRED", expiry: -1, start: -60), token: "tok-" + id)
                await google.addVoided(Self.voided("tok-" + id, at: -1))
            }
            let result = try await h.run { $0.maxDowngradeRatio = 1 }
            #expect(result.exitStatus == .ok)
            let rows = try h.report(result)
            for n in 0..<5 {
                let user = try #require(try await h.user("p-\(n)"))
                #expect(user.currentTier == 0, "p-\(n)")
                #expect(rows["p-\(n)"]?.candidateReason == ["google_voided"], "p-\(n)")
            }
            #expect(await google.voidedRequestQueries().count == 3)
            #expect(result.summary.feeds?["google_play"]?.entries == 5)
        }
    }

    @Test("a failing feed is reported in the summary, the night goes on, and the run exits 1")
    func failingFeed() async throws {
        try await GoogleHarness.with { h, google in
            try await h.db.insertUsers([GoogleWorld.row("f-refunded", end: 300)])
            await google.setPurchase(GoogleWorld.play("EXPIRED", expiry: -1, start: -60), token: "tok-f-refunded")
            await google.addVoided(Self.voided("tok-f-refunded", at: -1))
            try await h.db.insertUsers([GoogleWorld.row("f-lapsed", end: -2)])
            await google.setPurchase(GoogleWorld.play("EXPIRED", expiry: -2), token: "tok-f-lapsed")
            await google.setVoidedFault(.status(500))

            let result = try await h.run { $0.maxDowngradeRatio = 1 }
            #expect(result.exitStatus == .userErrors)
            let feed = try #require(result.summary.feeds?["google_play"])
            let error = try #require(feed.error)
            #expect(error.contains("voided purchases") && error.contains("500"))
            #expect(!error.contains("ya29"), "no access token in the summary")

            let rows = try h.report(result)
            let lapsed = try #require(try await h.user("f-lapsed"))
            #expect(lapsed.currentTier == 0 && rows["f-lapsed"]?.action == "downgrade", "the night went on")
            let refunded = try #require(try await h.user("f-refunded"))
            #expect(refunded.currentTier == 1 && rows["f-refunded"] == nil, "nobody named it")
        }
    }
}
