import Foundation
import StoreSimulator
import SubreconCore
import SubreconJob
import SubreconPorts
import SubreconReports
import SubreconTestSupport
import SubreconTestWorld
import Testing

/// The job end to end over each backend: a night's rows, audit, intents and reports, a rerun, a dry run, the safety
/// valve, source faults and the selection options, with the loopback simulator.
@Suite("A night end to end", .serialized, .timeLimit(.minutes(5)))
struct NightJobTests {
    /// A night with one user per common case.
    func seedNight(_ h: JobWorld) async throws {
        try await h.seed(h.row("u-expired", tier: 1, "active", end: -3), JobWorld.subscription(expires: -3))
        try await h.seed(h.row("u-renewed", tier: 1, "active", end: -2), JobWorld.subscription(purchased: -2, expires: 28))
        try await h.seed(h.row("u-restored", tier: 0, "expired", end: -10), JobWorld.subscription(purchased: -1, expires: 29))
        try await h.seed(
            h.row("u-billing", tier: 1, "active", end: -1), JobWorld.subscription(expires: -1, grace: 14, billing: -1))
        try await h.seed(
            h.row("u-refund", tier: 2, "active", end: -1, product: "pro_monthly"),
            JobWorld.subscription("pro_monthly", purchased: -1, expires: 29, refunded: -0.5, price: 19.99))
        try await h.seed(h.row("u-unknown", tier: 1, "active", end: -1))  // RevenueCat answers 201
        try await h.seed(h.row("u-insync", tier: 0, "expired", end: -20), JobWorld.subscription(expires: -20))
        try await h.seed(h.row("u-free", tier: 0, "none", end: nil))  // never a candidate
        for n in 0..<4 {
            try await h.seed(h.row("u-filler-\(n)", tier: 1, "active", end: -1), JobWorld.subscription(purchased: -1, expires: 29))
        }
    }

    @Test("a night: rows, audit, intents and every report file agree", arguments: JobWorld.backends)
    func night(_ backend: WorldBackend) async throws {
        try await JobWorld.with(backend) { h in
            try await seedNight(h)
            let result = try await h.run()
            #expect(result.exitStatus == .ok)

            let expired = try #require(try await h.user("u-expired"))
            #expect(expired.currentTier == 0 && expired.statusText == "expired")
            let renewed = try #require(try await h.user("u-renewed"))
            #expect(renewed.currentTier == 1 && renewed.endDate == JobWorld.day(28))
            let restored = try #require(try await h.user("u-restored"))
            #expect(restored.currentTier == 1 && restored.statusText == "active")
            let billing = try #require(try await h.user("u-billing"))
            #expect(billing.currentTier == 1 && billing.statusText == "billing_issue" && billing.graceEndsAt == JobWorld.day(14))
            let refunded = try #require(try await h.user("u-refund"))
            #expect(refunded.currentTier == 0 && refunded.statusText == "refunded")
            let unknown = try #require(try await h.user("u-unknown"))
            #expect(unknown.currentTier == 1 && unknown.statusText == "active", "absence of evidence is no downgrade")

            #expect(try await h.auditRows("u-expired") == 1)
            #expect(try await h.auditRows("u-unknown") == 0)
            #expect(try await h.auditRows("u-insync") == 0)
            #expect(try await h.intents("u-expired") == 1)
            #expect(try await h.intents("u-billing") == 1)
            #expect(try await h.intents("u-refund") == 1)
            #expect(try await h.intents("u-restored") == 1)
            #expect(try await h.intents("u-renewed") == 0)
            #expect(try await h.db.count(.intentsOfKind(user: "u-billing", .billingIssue)) == 1, "UPDATE_PAYMENT")

            let rows = try h.report(result)
            #expect(rows.count == 11, "every candidate once, the free user never")
            #expect(rows["u-free"] == nil)
            #expect(rows["u-expired"]?.action == "downgrade" && rows["u-expired"]?.drift == ["missed_expiration"])
            #expect(rows["u-expired"]?.pushIntent == ["expired"] && rows["u-expired"]?.applied == true)
            #expect(rows["u-renewed"]?.action == "extend" && rows["u-renewed"]?.drift == ["missed_renewal"])
            #expect(rows["u-restored"]?.action == "restore")
            #expect(rows["u-billing"]?.drift == ["billing_issue_entered"])
            #expect(rows["u-refund"]?.drift == ["missed_refund"])
            #expect(rows["u-unknown"]?.action == "skipped" && rows["u-unknown"]?.drift == ["unknown_at_source"])
            #expect(rows["u-unknown"]?.applied == false)
            #expect(rows["u-insync"]?.action == "none" && rows["u-insync"]?.drift == ["in_sync"])
            // CONTRACT "Reports": the sources asked and why each user was a candidate.
            #expect(rows.values.allSatisfy { $0.sources == ["revenuecat"] }, "RevenueCat alone is configured")
            #expect(rows["u-expired"]?.candidateReason == ["expired"])
            #expect(rows["u-restored"]?.candidateReason == ["lapsed"])
            #expect(rows["u-insync"]?.candidateReason == ["lapsed"])

            let csv = try h.csvLines(result, "drift.csv")
            #expect(csv.first == ReportRow.columns.joined(separator: ","))
            #expect(csv.count == 12)
            #expect(
                csv.dropFirst().map { $0.split(separator: ",").dropFirst().first.map(String.init) ?? "" } == rows.keys.sorted(),
                "rows in user-id order")
            let intents = try h.csvLines(result, "push_intents.csv")
            #expect(intents.count == 5)

            let summary = try JSONDecoder().decode(
                RunSummary.self, from: Data(contentsOf: result.folder.appendingPathComponent("summary.json")))
            #expect(summary.candidates == 11 && summary.applied == 9 && summary.intentsQueued == 4)
            #expect(summary.actions["downgrade"] == 2 && summary.drift["unknown_at_source"] == 1)
            #expect(summary.requests["revenuecat"]?.requests == 11)
            #expect(summary.sources["app_store"]?.contains("not configured") == true)
            let usd = try #require(summary.finance.buckets["app_store|USD"])
            #expect(usd.refunds.count == 1 && usd.refunds.value == Decimal(string: "19.99"))
            #expect(usd.billingIssueAtRisk.count == 1 && usd.restored.count == 1)
            let latest = try FileManager.default.destinationOfSymbolicLink(atPath: h.reportDirectory.appendingPathComponent("latest").path)
            #expect(latest == result.summary.runID)
            #expect(try await h.db.count(.runs(.completed)) == 1)
        }
    }

    @Test("a rerun changes nothing and queues no intent twice", arguments: JobWorld.backends)
    func rerun(_ backend: WorldBackend) async throws {
        try await JobWorld.with(backend) { h in
            try await seedNight(h)
            _ = try await h.run()
            let intentsAfterFirst = try await h.db.count(.intents(user: nil))
            let auditAfterFirst = try await h.db.count(.audits(user: nil))
            let second = try await h.run()
            #expect(second.summary.applied == 0)
            #expect(second.summary.intentsQueued == 0)
            #expect(try await h.db.count(.intents(user: nil)) == intentsAfterFirst)
            #expect(try await h.db.count(.audits(user: nil)) == auditAfterFirst)
            #expect(try h.csvLines(second, "push_intents.csv").count == 1, "header only")

            // A webhook regresses the row to its old state: the next run fixes it again but the intent is not queued twice.
            try await h.db.webhookWrite("u-expired", tier: 1, status: "active")
            let third = try await h.run()
            #expect(try h.report(third)["u-expired"]?.applied == true)
            #expect(third.summary.intentsQueued == 0 && third.summary.intentsDeduplicated == 1)
            #expect(try await h.intents("u-expired") == 1)
        }
    }

    @Test("a dry run decides and reports but changes nothing", arguments: JobWorld.backends)
    func dryRun(_ backend: WorldBackend) async throws {
        try await JobWorld.with(backend) { h in
            try await seedNight(h)
            let before = try await h.user("u-expired")
            let result = try await h.run { $0.dryRun = true }
            #expect(try await h.user("u-expired") == before)
            #expect(try await h.db.count(.audits(user: nil)) == 0)
            #expect(try await h.db.count(.intents(user: nil)) == 0)
            #expect(try await h.db.count(.runs(nil)) == 0)
            let rows = try h.report(result)
            #expect(rows["u-expired"]?.action == "downgrade" && rows["u-expired"]?.applied == false)
            #expect(rows.values.allSatisfy { !$0.applied })
            #expect(result.summary.dryRun && result.summary.applied == 0)
        }
    }

    @Test("the safety valve applies nothing, still reports, and exits 3", arguments: JobWorld.backends)
    func valve(_ backend: WorldBackend) async throws {
        try await JobWorld.with(backend) { h in
            for n in 0..<6 {
                try await h.seed(h.row("v-lapsed-\(n)", tier: 1, "active", end: -2), JobWorld.subscription(expires: -2))
            }
            try await h.seed(h.row("v-renewed", tier: 1, "active", end: -2), JobWorld.subscription(purchased: -2, expires: 28))
            let result = try await h.run()
            #expect(result.exitStatus == .valveTripped)
            #expect(result.summary.valve?.tripped == true && result.summary.valve?.wouldLoseTier == 6)
            #expect(try await h.db.count(.usersAtTier(1)) == 7)
            #expect(try await h.db.count(.intents(user: nil)) == 0)
            let rows = try h.report(result)
            #expect(rows.count == 7 && rows.values.allSatisfy { !$0.applied })
            #expect(rows["v-lapsed-0"]?.action == "downgrade")
            #expect(try await h.db.count(.runs(.valveTripped)) == 1)

            let relaxed = try await h.run { $0.maxDowngradeRatio = 0.9 }
            #expect(relaxed.exitStatus == .ok && relaxed.summary.applied == 7)
        }
    }

    @Test("faults — 500, 429, malformed JSON, timeout — leave users untouched and reported; exit 1", arguments: JobWorld.backends)
    func faults(_ backend: WorldBackend) async throws {
        // 429 is bounded by time, not attempts: a small 429 budget lets "429 forever" end quickly.
        try await JobWorld.with(backend, extra: ["SUBRECON_HTTP_429_BUDGET_SECONDS": "0.5"]) { h in
            let ids = ["f-500", "f-429-forever", "f-malformed", "f-timeout", "f-429-once"]
            for id in ids {
                try await h.seed(h.row(id, tier: 1, "active", end: -2), JobWorld.subscription(expires: -2))
            }
            try await h.seed(h.row("f-fine", tier: 1, "active", end: -2), JobWorld.subscription(purchased: -2, expires: 28))
            await h.revenueCat.setFault(.status(500), for: "f-500")
            await h.revenueCat.setFault(.rateLimited(backoffMS: 10, retryAfter: nil), for: "f-429-forever")
            await h.revenueCat.setFault(.malformedJSON, for: "f-malformed")
            await h.revenueCat.setFault(.delay(.seconds(5)), for: "f-timeout")
            // The timed-out request is still held by the simulator when the retry arrives; real RevenueCat would
            // answer that retry 429 (one request per user at a time). Here the retry must time out too.
            await h.revenueCat.setRejectsConcurrentRequests(false)
            await h.revenueCat.setFault(.rateLimited(backoffMS: 10, retryAfter: nil), for: "f-429-once", times: 1)
            let result = try await h.run { $0.maxDowngradeRatio = 1 }
            #expect(result.exitStatus == .userErrors)
            let rows = try h.report(result)
            for id in ["f-500", "f-429-forever", "f-malformed", "f-timeout"] {
                let user = try #require(try await h.user(id))
                #expect(user.currentTier == 1 && user.statusText == "active", "\(id) untouched")
                #expect(rows[id]?.drift == ["fetch_error"] && rows[id]?.action == "skipped" && rows[id]?.applied == false)
                #expect(rows[id]?.error?.isEmpty == false)
                #expect(rows[id]?.error?.contains("sk_test_") == false, "no secret in the report")
                #expect(try await h.auditRows(id) == 0)
            }
            #expect(rows["f-timeout"]?.error?.contains("timed out") == true)
            #expect(rows["f-429-once"]?.action == "downgrade" && rows["f-429-once"]?.applied == true)
            #expect(rows["f-fine"]?.action == "extend")
            #expect(result.summary.errors == 4)
            #expect((result.summary.requests["revenuecat"]?.rateLimited ?? 0) >= 4)
        }
    }

    @Test("--limit stops after N candidates; --users-file restricts the run; --as-of judges the past", arguments: JobWorld.backends)
    func selection(_ backend: WorldBackend) async throws {
        try await JobWorld.with(backend) { h in
            try await seedNight(h)
            let limited = try await h.run {
                $0.limit = 3
                $0.dryRun = true
            }
            #expect(try h.report(limited).keys.sorted() == ["u-billing", "u-expired", "u-filler-0"])
            let chosen = try await h.run {
                $0.userIDs = ["u-refund", "u-free", "nobody"]
                $0.dryRun = true
            }
            #expect(try h.report(chosen).keys.sorted() == ["u-refund"], "the free user is still no candidate")
            let past = try await h.run {
                $0.asOf = JobWorld.day(-5)
                $0.dryRun = true
            }
            #expect(try h.report(past)["u-expired"] == nil, "five days earlier the period was still running")
        }
    }
}
