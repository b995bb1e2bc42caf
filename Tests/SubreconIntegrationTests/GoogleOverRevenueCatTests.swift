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

/// Google Play is the authority for its own purchases over RevenueCat's view of them (CONTRACT "Sources and the decision"). When the
/// two disagree, Google's answer decides and the row is reported `source_conflict`, both ways.
@Suite(
    "Google Play over RevenueCat: source_conflict", .serialized, .enabled(if: Harness.isEnabled, Harness.skip),
    .timeLimit(.minutes(3)))
struct GoogleOverRevenueCatTests {
    static func withGoogleAndRevenueCat(_ body: (Harness, GooglePlaySimulator) async throws -> Void) async throws {
        let account = try GoogleTestServiceAccount.generate(tokenURI: "{base}/token")
        let google = GooglePlaySimulator(account: account, packageName: GoogleWorld.package)
        try await Harness.with(revenueCat: true, routes: [google], extra: GoogleWorld.environment(account)) { h in
            try await body(h, google)
        }
    }

    @Test(
        "RevenueCat says active, Google says expired about the same line (matched by order id): Google wins, downgrade, source_conflict; an entry naming no order is no known line: kept (CONTRACT 'Whose purchase it is')"
    )
    func googleSaysExpired() async throws {
        try await Self.withGoogleAndRevenueCat { h, google in
            let cases: [(id: String, rcOrder: String?, googleOrder: String)] = [
                ("gc-order", "GPA.1111-2222-3333-44444..2", "GPA.1111-2222-3333-44444..2"),
                ("gc-base", "GPA.5555-6666-7777-88888", "GPA.5555-6666-7777-88888..4"),
                ("gc-product", nil, "GPA.9999-0000-1111-22222..1"),
            ]
            for (id, rcOrder, googleOrder) in cases {
                try await h.db.insertUsers([GoogleWorld.row(id, end: -1)])
                await h.revenueCat.setSubscriber(GoogleWorld.revenueCat(purchased: -1, expires: 29, order: rcOrder), for: id)
                await google.setPurchase(
                    .single(
                        "SUBSCRIPTION_STATE_EXPIRED", product: "premium_monthly", start: Harness.day(-31), expiry: Harness.day(-1),
                        autoRenew: false, orderID: googleOrder),
                    token: "tok-" + id)
            }

            let result = try await h.run { $0.maxDowngradeRatio = 1 }
            let rows = try h.report(result)
            for (id, rcOrder, _) in cases {
                guard rcOrder != nil else {
                    // Google's answer about the row's token is not known to be about RevenueCat's entitled entry.
                    let user = try #require(try await h.user(id))
                    #expect(user.currentTier == 1, "\(id): another (or an unknown) line never ends an entitled one")
                    #expect(rows[id]?.action != "downgrade", "\(id)")
                    continue
                }
                let user = try #require(try await h.user(id))
                #expect(user.currentTier == 0 && user.statusText == "expired", "\(id): Google's answer decides")
                let row = try #require(rows[id])
                #expect(row.action == "downgrade", "\(id)")
                #expect(row.drift.contains("source_conflict"), "\(id): \(row.drift)")
                #expect(row.conflicts.count == 1, "\(id)")
                #expect(row.conflicts.first?.store == .googlePlay, "\(id)")
                #expect(row.conflicts.first?.revenueCat.entitled == true, "\(id)")
                #expect(row.conflicts.first?.storeView.entitled == false, "\(id)")
                #expect(row.sources.contains("revenuecat") && row.sources.count == 2, "\(id): \(row.sources)")
                #expect(try await h.auditRows(id) == 1, "\(id)")
            }
            #expect(await google.counters().apiRequests == cases.count)
        }
    }

    @Test("RevenueCat says expired, Google says active until later: Google wins, the row keeps its tier to Google's end, source_conflict")
    func googleSaysActive() async throws {
        try await Self.withGoogleAndRevenueCat { h, google in
            try await h.db.insertUsers([GoogleWorld.row("gc-renewed", end: -2)])
            await h.revenueCat.setSubscriber(
                GoogleWorld.revenueCat(purchased: -32, expires: -2, order: "GPA.3333-4444-5555-66666"), for: "gc-renewed")
            await google.setPurchase(
                .single(
                    "SUBSCRIPTION_STATE_ACTIVE", product: "premium_monthly", start: Harness.day(-32), expiry: Harness.day(28),
                    orderID: "GPA.3333-4444-5555-66666..1"),
                token: "tok-gc-renewed")

            let result = try await h.run { $0.maxDowngradeRatio = 1 }
            let rows = try h.report(result)
            let user = try #require(try await h.user("gc-renewed"))
            #expect(user.currentTier == 1 && user.statusText == "active" && user.endDate == Harness.day(28))
            let row = try #require(rows["gc-renewed"])
            #expect(row.action == "extend")
            #expect(row.drift.contains("source_conflict"), "\(row.drift)")
            #expect(row.conflicts.first?.store == .googlePlay)
            #expect(row.conflicts.first?.revenueCat.entitled == false)
            #expect(row.conflicts.first?.storeView.entitled == true)
            #expect(try await h.intents("gc-renewed") == 0, "a renewal queues no intent")
        }
    }
}
