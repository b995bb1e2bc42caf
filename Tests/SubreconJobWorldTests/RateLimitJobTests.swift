import Foundation
import StoreSimulator
import SubreconCore
import SubreconJob
import SubreconPorts
import SubreconReports
import SubreconTestSupport
import SubreconTestWorld
import Testing

/// "429 never traps" and "budgets are the app's", end to end: the job as `run` composes it, over each backend, the
/// loopback simulators answering hostile 429s.
@Suite("The job under hostile 429s", .serialized, .timeLimit(.minutes(3)))
struct RateLimitJobTests {
    /// The files every finished run writes.
    static func expectReports(_ result: RunResult) {
        for name in ["drift.csv", "drift.json", "summary.json"] {
            #expect(FileManager.default.fileExists(atPath: result.folder.appendingPathComponent(name).path), "\(name) written")
        }
    }

    @Test(
        "RevenueCat 429 with backoff_ms 1e19 or Retry-After inf: run completes, that user fetch_error and untouched, others applied, exit 1",
        arguments: JobWorld.backends)
    func revenueCatAbsurdWaits(_ backend: WorldBackend) async throws {
        try await JobWorld.with(backend) { h in
            for id in ["r-1e19", "r-inf", "r-huge-string", "r-fine"] {
                try await h.seed(h.row(id, tier: 1, "active", end: -2), JobWorld.subscription(expires: -2))
            }
            let body = Data(#"{"code": 7638, "message": "Rate limit exceeded", "backoff_ms": 1e19}"#.utf8)
            await h.revenueCat.setFault(.raw(status: 429, headers: [:], body: body), for: "r-1e19")
            await h.revenueCat.setFault(.raw(status: 429, headers: ["Retry-After": "inf"], body: Data()), for: "r-inf")
            await h.revenueCat.setFault(
                .raw(status: 429, headers: ["Retry-After": "99999999999999999999999999"], body: Data(#"{"backoff_ms": "x"}"#.utf8)),
                for: "r-huge-string")
            let result = try await h.run { $0.maxDowngradeRatio = 1 }

            #expect(result.exitStatus == .userErrors)
            #expect(result.summary.exitCode == 1 && result.summary.errors == 3)
            Self.expectReports(result)
            let rows = try h.report(result)
            for id in ["r-1e19", "r-inf", "r-huge-string"] {
                let user = try #require(try await h.user(id))
                #expect(user.currentTier == 1 && user.statusText == "active", "\(id) untouched")
                #expect(rows[id]?.drift == ["fetch_error"] && rows[id]?.action == "skipped" && rows[id]?.applied == false)
                let error = try #require(rows[id]?.error)
                #expect(error.contains("rate limited (HTTP 429)") && error.contains("cap"), "\(id): \(error)")
                #expect(!error.contains("sk_test_"))
                #expect(try await h.auditRows(id) == 0)
                #expect(await h.revenueCat.counters().requestsPerUser[id] == 1, "given up at once, no retry loop")
            }
            #expect(rows["r-1e19"]?.error?.contains("asked to wait 1e+16 s, more than the 60 s cap") == true)
            #expect(rows["r-inf"]?.error?.contains("unbounded wait") == true)
            #expect(rows["r-fine"]?.action == "downgrade" && rows["r-fine"]?.applied == true)
            #expect(try await h.user("r-fine")?.currentTier == 0)
        }
    }

    @Test("the 429 wait cap is configurable: SUBRECON_HTTP_MAX_429_WAIT_SECONDS", arguments: JobWorld.backends)
    func configurableCap(_ backend: WorldBackend) async throws {
        try await JobWorld.with(backend, extra: ["SUBRECON_HTTP_MAX_429_WAIT_SECONDS": "0.2"]) { h in
            try await h.seed(h.row("c-slow", tier: 1, "active", end: -2), JobWorld.subscription(expires: -2))
            await h.revenueCat.setFault(.rateLimited(backoffMS: 500, retryAfter: nil), for: "c-slow")
            let result = try await h.run { $0.maxDowngradeRatio = 1 }
            #expect(result.exitStatus == .userErrors)
            let rows = try h.report(result)
            #expect(rows["c-slow"]?.error?.contains("asked to wait 0.5 s, more than the 0.2 s cap") == true)
            #expect(try await h.user("c-slow")?.currentTier == 1)
        }
    }

    @Test(
        "Apple 429 with Retry-After far in the future: run completes, that user fetch_error and untouched, others applied, exit 1",
        arguments: JobWorld.backends)
    func appleFarRetryAfter(_ backend: WorldBackend) async throws {
        try await JobWorld.with(backend, apple: true) { h in
            for (id, txn) in [("a-far", "7201"), ("a-inf", "7202"), ("a-fine", "7203")] {
                try await h.seed(h.row(id, tier: 1, "active", end: -2, txn: txn), JobWorld.subscription(expires: -2, txn: txn))
                await h.appStore.setScenario(
                    AppStoreScenario(
                        originalTransactionID: txn, productID: "premium_monthly", status: 2, purchaseDate: JobWorld.day(-32),
                        expiresDate: JobWorld.day(-2)))
            }
            let inAnHour = String(Int64(Date().timeIntervalSince1970 * 1000) + 3_600_000)
            let body = Data(#"{"errorCode": 4290000, "errorMessage": "Rate limit exceeded."}"#.utf8)
            await h.appStore.setFault(.raw(status: 429, headers: ["Retry-After": inAnHour], body: body, times: 100), for: "7201")
            await h.appStore.setFault(.raw(status: 429, headers: ["Retry-After": "inf"], body: body, times: 100), for: "7202")
            let result = try await h.run { $0.maxDowngradeRatio = 1 }

            #expect(result.exitStatus == .userErrors)
            #expect(result.summary.errors == 2)
            Self.expectReports(result)
            let rows = try h.report(result)
            for (id, txn) in [("a-far", "7201"), ("a-inf", "7202")] {
                let user = try #require(try await h.user(id))
                #expect(user.currentTier == 1 && user.statusText == "active", "\(id) untouched")
                #expect(rows[id]?.drift == ["fetch_error"] && rows[id]?.applied == false)
                let error = try #require(rows[id]?.error)
                #expect(error.contains("rate limited") && error.contains("cap"), "\(id): \(error)")
                #expect(try await h.auditRows(id) == 0)
                #expect(await h.appStore.requestCount(for: txn) == 1, "given up at once")
            }
            #expect(rows["a-far"]?.error?.contains("asked to wait") == true)
            #expect(rows["a-fine"]?.action == "downgrade" && rows["a-fine"]?.applied == true)
        }
    }

    @Test("users hit by more 429s than SUBRECON_HTTP_MAX_ATTEMPTS (3) still end reconciled, exit 0", arguments: JobWorld.backends)
    func manyRateLimitsStillReconciled(_ backend: WorldBackend) async throws {
        try await JobWorld.with(backend, apple: true) { h in
            try await h.seed(h.row("m-rc", tier: 1, "active", end: -2), JobWorld.subscription(expires: -2))
            await h.revenueCat.setFault(.rateLimited(backoffMS: 20, retryAfter: nil), for: "m-rc", times: 6)
            try await h.seed(h.row("m-apple", tier: 1, "active", end: -2, txn: "7301"), JobWorld.subscription(expires: -2, txn: "7301"))
            await h.appStore.setScenario(
                AppStoreScenario(
                    originalTransactionID: "7301", productID: "premium_monthly", status: 2, purchaseDate: JobWorld.day(-32),
                    expiresDate: JobWorld.day(-2)))
            await h.appStore.setFault(.rateLimited(after: .milliseconds(30), times: 6), for: "7301")
            let result = try await h.run { $0.maxDowngradeRatio = 1 }

            #expect(result.exitStatus == .ok)
            #expect(result.summary.errors == 0)
            let rows = try h.report(result)
            for id in ["m-rc", "m-apple"] {
                #expect(rows[id]?.action == "downgrade" && rows[id]?.applied == true, "\(id) reconciled")
                #expect(try await h.user(id)?.currentTier == 0)
                #expect(try await h.auditRows(id) == 1)
            }
            #expect(await h.revenueCat.counters().requestsPerUser["m-rc"] == 7)
            #expect(await h.appStore.requestCount(for: "7301") == 7)
            #expect((result.summary.requests["revenuecat"]?.rateLimited ?? 0) >= 6)
            #expect((result.summary.requests["app_store"]?.rateLimited ?? 0) >= 6)
        }
    }

    @Test("a --shard I/N run paces at 1/N of the --*-rps budget and says so in the summary", arguments: JobWorld.backends)
    func shardBudget(_ backend: WorldBackend) async throws {
        try await JobWorld.with(backend, apple: true) { h in
            try await h.seed(h.row("s-one", tier: 1, "active", end: -2), JobWorld.subscription(expires: -2))
            let shard = try #require(ShardSpec(parsing: "1/4"))
            let result = try await h.run {
                $0.shard = shard
                $0.revenueCatRequestsPerSecond = 40
                $0.requestsPerSecond[.appStore] = 50
                $0.maxDowngradeRatio = 1
            }
            #expect(result.summary.sources["revenuecat"]?.contains("budget 10 req/s (1/4 of the app's 40 req/s, shard 1/4)") == true)
            #expect(result.summary.sources["app_store"]?.contains("budget 12.5 req/s (1/4 of the app's 50 req/s, shard 1/4)") == true)
            let json = try String(contentsOf: result.folder.appendingPathComponent("summary.json"), encoding: .utf8)
            #expect(json.contains("budget 12.5 req/s"))
        }
    }
}
