import Foundation
import PostgresNIO
import RevenueCat
import StoreSimulator
import SubreconApp
import SubreconCore
import SubreconJob
import SubreconReports
import Testing

/// RevenueCat API v2 beside v1 in real nights (CONTRACT "Sources and the decision"): a night with v2 configured creates
/// no RevenueCat customer and judges as v1 alone does; a user RevenueCat answered for before needs no v2 question; every
/// v2 answer but 200 and 404 `resource_missing` is that user's `fetch_error`.
@Suite("RevenueCat API v2 in a night", .serialized, .enabled(if: Harness.isEnabled, Harness.skip))
struct RevenueCatV2JobTests {
    static let v2Key = "sk_v2_" + UUID().uuidString
    static let project = "proj_it_1"
    static let v2Env = ["REVENUECAT_V2_API_KEY": v2Key, "REVENUECAT_PROJECT_ID": project]

    /// Free rows RevenueCat never saw, a free row whose first webhook was lost, tier holders known and unknown.
    static func seed(_ h: Harness) async throws -> [String] {
        await h.revenueCat.setV2(apiKey: v2Key, projectID: project)
        var unknown: [String] = []
        for n in 0..<10 {
            let id = n == 0 ? "$RCAnonymousID:web/\(n)" : "web-\(n)"
            unknown.append(id)
            try await h.seed(h.row(id, tier: 0, "none", end: nil))
        }
        try await h.seed(h.row("lost-webhook", tier: 0, "none", end: nil), Harness.subscription(purchased: -3, expires: 27))
        try await h.seed(h.row("holder-renewed", tier: 1, "active", end: -2), Harness.subscription(purchased: -2, expires: 28))
        try await h.seed(h.row("holder-lapsed", tier: 1, "active", end: -2), Harness.subscription(expires: -2))
        try await h.seed(h.row("holder-unknown", tier: 2, "active", end: -1, product: "pro_monthly"))
        return unknown
    }

    static func verdicts(_ h: Harness, _ result: RunResult) throws -> [String: String] {
        try h.report(result).mapValues { "\($0.action) \($0.drift) \($0.truthTier.map(String.init) ?? "-") \($0.error ?? "")" }
    }

    @Test("a free sweep over ids RevenueCat never saw creates no customer with v2, and judges every user as v1 alone does")
    func freeSweepCreatesNothing() async throws {
        try await Harness.with(extra: Self.v2Env) { h in
            let unknown = try await Self.seed(h)
            let sweep: (inout RunOptions) -> Void = {
                $0.sweepFreeDays = 1
                $0.dryRun = true
            }
            let withV2 = try await h.run(sweep)
            let counters = await h.revenueCat.counters(reset: true)
            #expect(counters.customersCreated == 0, "no customer created with v2 configured")
            #expect(unknown.allSatisfy { counters.requestsPerUser[$0] == nil }, "v1 not asked about an id v2 does not know")
            #expect(withV2.summary.requests[RevenueCatV2Client.sourceName]?.requests == 14)
            #expect(withV2.summary.requests["revenuecat"]?.requests == 3, "v1 only for the three customers v2 knows")

            var v1Alone = h.env.values
            v1Alone["REVENUECAT_V2_API_KEY"] = nil
            v1Alone["REVENUECAT_PROJECT_ID"] = nil
            let alone = try await Commands.run(environment: .init(v1Alone), options: h.options(sweep), logger: h.logger)
            // One customer per id RevenueCat never saw: the free rows and the tier holder it does not know.
            #expect(await h.revenueCat.counters().customersCreated == unknown.count + 1)
            #expect(alone.summary.requests[RevenueCatV2Client.sourceName] == nil)
            #expect(try Self.verdicts(h, withV2) == Self.verdicts(h, alone), "the same verdicts as v1 alone")
            #expect(try h.report(withV2)["holder-unknown"]?.action == "skipped")
            #expect(try h.report(withV2)["lost-webhook"]?.truthTier == 1)
        }
    }

    @Test("a user RevenueCat answered for in an earlier run needs no v2 question; ids it does not know are asked again")
    func knownCustomersRemembered() async throws {
        try await Harness.with(extra: Self.v2Env) { h in
            let unknown = try await Self.seed(h)
            let first = try await h.run { $0.sweepFreeDays = 1 }
            #expect(first.summary.requests[RevenueCatV2Client.sourceName]?.requests == 14)
            let second = try await h.run {
                $0.sweepFreeDays = 1
                $0.asOf = Harness.day(1)
            }
            // The unknown free ids and the tier holder RevenueCat does not know; not the lapsed holder it answered for.
            #expect(second.summary.requests[RevenueCatV2Client.sourceName]?.requests == unknown.count + 1)
            #expect(await h.revenueCat.counters().customersCreated == 0)
            let known = try await h.count("select count(*)::int from revenuecat_known_customers")
            #expect(known == 3, "the three users v1 answered for")
        }
    }

    /// BENCHMARKS.md "RevenueCat requests per user": a first night with v2 asks v2 about everyone (v1 too for those
    /// RevenueCat knows); on the next night, where most users are known, each costs close to one request.
    @Test("RevenueCat requests per user: a night where most users are known costs close to one")
    func requestsPerUserMostlyKnown() async throws {
        try await Harness.with(extra: Self.v2Env) { h in
            await h.revenueCat.setV2(apiKey: Self.v2Key, projectID: Self.project)
            let (knownCount, unknownCount) = (180, 20)
            for n in 0..<(knownCount + unknownCount) {
                let id = String(format: "b-%04d", n)
                if n < knownCount {
                    try await h.seed(h.row(id, tier: 1, "active", end: -1), Harness.subscription(purchased: -1, expires: 29))
                } else {
                    try await h.seed(h.row(id, tier: 0, "none", end: nil))
                }
            }
            func perUser(_ result: RunResult) -> (Int, Int, Double) {
                let v1 = result.summary.requests["revenuecat"]?.requests ?? 0
                let v2 = result.summary.requests[RevenueCatV2Client.sourceName]?.requests ?? 0
                return (v1, v2, Double(v1 + v2) / Double(knownCount + unknownCount))
            }
            let sweepAll: (inout RunOptions) -> Void = {
                $0.sweepDays = 1
                $0.sweepFreeDays = 1
                $0.revenueCatV2RequestsPerSecond = 0
                $0.revenueCatRequestsPerSecond = 0
            }
            let first = perUser(try await h.run(sweepAll))
            let second = perUser(
                try await h.run {
                    sweepAll(&$0)
                    $0.asOf = Harness.day(1)
                })
            print(
                "revenuecat requests per user (\(knownCount) known, \(unknownCount) never seen): first night v1 \(first.0) + v2 "
                    + "\(first.1) = \(first.2) per user; next night v1 \(second.0) + v2 \(second.1) = \(second.2) per user")
            #expect(first.0 == knownCount && first.1 == knownCount + unknownCount)
            #expect(second.0 == knownCount && second.1 == unknownCount && second.2 == 1.0)
            #expect(await h.revenueCat.counters().customersCreated == 0)
        }
    }

    @Test("every v2 answer but 200 and 404 resource_missing is that user's fetch_error, untouched, and v1 is not asked")
    func hostileV2Answers() async throws {
        try await Harness.with(extra: Self.v2Env) { h in
            await h.revenueCat.setV2(apiKey: Self.v2Key, projectID: Self.project)
            let faults: [(String, RevenueCatFault)] = [
                ("h-403", .status(403)), ("h-429", .rateLimited(backoffMS: 3_600_000, retryAfter: nil)),
                ("h-500", .status(500)), ("h-bad", .malformedJSON),
                ("h-404", .raw(status: 404, headers: [:], body: Data("<html>not found</html>".utf8))),
                ("$RCAnonymousID:h/enc", .status(401)),
            ]
            for (id, fault) in faults {
                try await h.seed(h.row(id, tier: 1, "active", end: -1))
                for _ in 0..<5 { await h.revenueCat.setV2Fault(fault, for: id) }
            }
            let result = try await h.run()
            let report = try h.report(result)
            for (id, _) in faults {
                #expect(report[id]?.action == "skipped" && report[id]?.drift == ["fetch_error"], "\(id): \(String(describing: report[id]))")
                #expect(report[id]?.error?.contains("RevenueCat API v2: ") == true)
                #expect(try await h.user(id)?.currentTier == 1, "untouched")
            }
            let counters = await h.revenueCat.counters()
            #expect(counters.totalRequests == 0 && counters.customersCreated == 0, "v1 never asked")
        }
    }
}
