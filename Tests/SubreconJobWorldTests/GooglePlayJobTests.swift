import Foundation
import StoreSimulator
import SubreconCore
import SubreconPorts
import SubreconReports
import SubreconTestSupport
import SubreconTestWorld
import Testing

@testable import SubreconApp
@testable import SubreconJob

/// Google Play as the only source. The service account key's `token_uri` is `{base}/token`: the harness replaces
/// `{base}` in every extra variable (the key text included) with its loopback server, which serves the simulator.
@Suite("The job with Google Play alone", .serialized)
struct GooglePlayJobTests {
    @Test(
        "a night with Google alone: renewals extend, grace is a billing issue, hold/expired/410 downgrade, pause, cancel, test purchases untouched",
        arguments: JobWorld.backends)
    func night(_ backend: WorldBackend) async throws {
        try await GoogleWorld.with(backend) { h, google in
            let cases: [(String, Double, SimulatedPlaySubscription?)] = [
                ("g-active", -2, GoogleWorld.play("ACTIVE", expiry: 28, start: -2)),
                ("g-grace", -1, GoogleWorld.play("IN_GRACE_PERIOD", expiry: 2)),
                ("g-hold", -3, GoogleWorld.play("ON_HOLD", expiry: -3)),
                ("g-expired", -2, GoogleWorld.play("EXPIRED", expiry: -2)),
                ("g-paused", -5, GoogleWorld.play("PAUSED", expiry: -5)),
                ("g-canceled", -1, GoogleWorld.play("CANCELED", expiry: 10, start: -1)),
                ("g-test", -2, GoogleWorld.play("ACTIVE", expiry: 28, start: -2, test: true)),
                ("g-gone", -40, nil),
            ]
            for (id, end, purchase) in cases {
                try await h.db.insertUsers([GoogleWorld.row(id, end: end)])
                if let purchase { await google.setPurchase(purchase, token: "tok-" + id) }
            }
            await google.setGone("tok-g-gone")
            // A row without a token is not sent to Google (and, with no other source, stays as it is).
            try await h.db.insertUsers([
                UserRow(
                    id: "g-none", currentTier: 1, status: "active", endDate: JobWorld.day(-2), source: "apple_iap",
                    productID: "premium_monthly")
            ])

            let result = try await h.run { $0.maxDowngradeRatio = 1 }
            let rows = try h.report(result)

            let active = try #require(try await h.user("g-active"))
            #expect(active.currentTier == 1 && active.statusText == "active" && active.endDate == JobWorld.day(28))
            #expect(rows["g-active"]?.action == "extend")
            #expect(try await h.intents("g-active") == 0)

            let grace = try #require(try await h.user("g-grace"))
            #expect(grace.currentTier == 1 && grace.statusText == "billing_issue")
            #expect(try await h.intents("g-grace") == 1)

            for id in ["g-hold", "g-expired", "g-gone"] {
                let user = try #require(try await h.user(id))
                #expect(user.currentTier == 0 && user.statusText == "expired", "\(id)")
                #expect(rows[id]?.action == "downgrade", "\(id)")
                #expect(rows[id]?.pushIntent == ["expired"], "\(id)")
                #expect(try await h.intents(id) == 1, "\(id)")
            }

            let paused = try #require(try await h.user("g-paused"))
            #expect(paused.currentTier == 0 && paused.statusText == "paused")

            let canceled = try #require(try await h.user("g-canceled"))
            #expect(canceled.currentTier == 1 && canceled.statusText == "canceled" && canceled.endDate == JobWorld.day(10))
            #expect(canceled.autoRenew == false)

            #expect(rows["g-test"]?.drift.contains("sandbox_ignored") == true)
            let test = try #require(try await h.user("g-test"))
            // A test purchase never entitles in production, nor is it evidence about the row's line (CONTRACT "Whose purchase it is").
            #expect(test.currentTier == 1 && rows["g-test"]?.action == "skipped", "untouched")
            #expect(rows["g-test"]?.drift.contains("unknown_at_source") == true)

            let none = try #require(try await h.user("g-none"))
            #expect(none.currentTier == 1, "nobody was asked about it: untouched")
            #expect(rows["g-none"]?.action == "skipped")

            #expect(result.summary.requests["google_play"]?.requests == 10, "8 lookups, one voided purchases page and one token request")
            #expect(result.summary.sources["google_play"]?.contains("com.example.app") == true)
            #expect(result.summary.sources["google_play"]?.contains("10") == true, "the rate budget is named")
            #expect(await google.counters().tokensIssued == 1, "one access token for the whole run")
            #expect(await google.counters().apiRequests == 8)
        }
    }

    @Test(
        "an expiryTime with milliseconds is the instant the row, drift.json and drift.csv hold, to the millisecond",
        arguments: JobWorld.backends)
    func millisecondInstants(_ backend: WorldBackend) async throws {
        try await GoogleWorld.with(backend) { h, google in
            // 02:59:58.270 the day before T + 28 days: a value binary floating point cannot hold exactly.
            let expiry = JobWorld.day(28).addingTimeInterval(-1.730)
            try await h.db.insertUsers([GoogleWorld.row("g-ms", end: -2)])
            await google.setPurchase(
                .single(
                    "SUBSCRIPTION_STATE_ACTIVE", product: "premium_monthly", start: JobWorld.day(-2), expiry: expiry, autoRenew: true),
                token: "tok-g-ms")
            let result = try await h.run { $0.maxDowngradeRatio = 1 }
            let stated = ISO8601.string(expiry)
            #expect(stated.hasSuffix(":58.270Z"), "\(stated)")
            let user = try #require(try await h.user("g-ms"))
            #expect(user.endDate.map(ISO8601.string) == stated, "the row holds the stated instant")
            for name in ["drift.json", "drift.csv"] {
                let text = try String(contentsOf: result.folder.appendingPathComponent(name), encoding: .utf8)
                #expect(text.contains(String(stated.dropLast(5))), "\(name) prints \(stated)")
                #expect(text.contains(":58.270"), "\(name): the millisecond the source stated")
                #expect(!text.contains(":58.269"), "\(name): never a millisecond early")
            }
        }
    }

    @Test(
        "a subscription whose obfuscatedExternalAccountId names another user (or the user id in another case) never extends; the own id does",
        arguments: JobWorld.backends)
    func subscriptionBuyer(_ backend: WorldBackend) async throws {
        try await GoogleWorld.with(backend) { h, google in
            for (id, account) in [("g-own", "g-own"), ("g-other", "g-own"), ("g-case", "G-CASE"), ("g-blank", " ")] {
                try await h.db.insertUsers([GoogleWorld.row(id, end: -2)])
                var purchase = GoogleWorld.play("ACTIVE", expiry: 28, start: -2)
                purchase.obfuscatedAccountID = account
                await google.setPurchase(purchase, token: "tok-" + id)
            }
            let before = try #require(try await h.user("g-other"))
            let result = try await h.run { $0.maxDowngradeRatio = 1 }
            let rows = try h.report(result)
            for id in ["g-own", "g-blank"] {
                let user = try #require(try await h.user(id))
                #expect(user.currentTier == 1 && user.endDate == JobWorld.day(28), "\(id): its own (or no stated) buyer extends")
                #expect(rows[id]?.action == "extend", "\(id)")
                #expect(try await h.auditRows(id) == 1, "\(id): one audit row")
            }
            for id in ["g-other", "g-case"] {
                let user = try #require(try await h.user(id))
                #expect(user.endDate == JobWorld.day(-2) && user.currentTier == 1, "\(id): untouched")
                #expect(rows[id]?.action == "skipped" && rows[id]?.drift == ["ownership_conflict"], "\(id): \(rows[id]?.drift ?? [])")
                #expect(try await h.auditRows(id) == 0, "\(id): no audit row")
                #expect(try await h.intents(id) == 0, "\(id): no intent")
            }
            #expect(try await h.user("g-other") == before, "the whole row as it was")
        }
    }

    @Test(
        "each failure (5xx, 429, 401 twice, unknown token, malformed body) leaves the row untouched and reported; one 401 refreshes",
        arguments: JobWorld.backends)
    func failures(_ backend: WorldBackend) async throws {
        try await GoogleWorld.with(backend) { h, google in
            let ids = ["f-5xx", "f-429", "f-401", "f-unknown", "f-malformed", "f-refresh"]
            for id in ids {
                try await h.db.insertUsers([GoogleWorld.row(id, end: -2)])
                if id != "f-unknown" { await google.setPurchase(GoogleWorld.play("EXPIRED", expiry: -2), token: "tok-" + id) }
            }
            await google.setFault(.status(503), token: "tok-f-5xx")
            await google.setFault(.rateLimited(retryAfter: "3600"), token: "tok-f-429")
            await google.setFault(.status(401), token: "tok-f-401")
            await google.setFault(.malformedJSON, token: "tok-f-malformed")
            await google.setFault(.status(401), token: "tok-f-refresh", times: 1)

            let result = try await h.run { $0.maxDowngradeRatio = 1 }
            #expect(result.exitStatus == .userErrors)
            let rows = try h.report(result)
            for id in ["f-5xx", "f-429", "f-401", "f-malformed"] {
                let user = try #require(try await h.user(id))
                #expect(user.currentTier == 1 && user.statusText == "active" && user.endDate == JobWorld.day(-2), "\(id) untouched")
                #expect(rows[id]?.drift == ["fetch_error"], "\(id)")
                #expect(rows[id]?.action == "skipped" && rows[id]?.applied == false, "\(id)")
                #expect(rows[id]?.error?.contains("Google Play") == true, "\(id)")
                #expect(rows[id]?.error?.contains("ya29") == false, "\(id): no access token in the report")
                let audits = try await h.auditRows(id)
                let intents = try await h.intents(id)
                #expect(audits == 0 && intents == 0, "\(id)")
            }
            #expect(rows["f-5xx"]?.error?.contains("503") == true)
            #expect(rows["f-429"]?.error?.contains("429") == true)
            #expect(rows["f-401"]?.error?.contains("401") == true)
            #expect(rows["f-malformed"]?.error?.contains("malformed") == true)

            let unknown = try #require(try await h.user("f-unknown"))
            #expect(unknown.currentTier == 1 && unknown.endDate == JobWorld.day(-2))
            #expect(rows["f-unknown"]?.drift == ["unknown_at_source"])
            #expect(rows["f-unknown"]?.applied == false)

            // One 401: the token is refreshed once and the answer (expired) believed.
            let refreshed = try #require(try await h.user("f-refresh"))
            #expect(refreshed.currentTier == 0 && refreshed.statusText == "expired")
            #expect(await google.counters().tokensIssued >= 2)
        }
    }
}
