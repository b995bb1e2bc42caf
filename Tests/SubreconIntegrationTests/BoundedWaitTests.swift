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

/// No wait a source asks for outlives the deadline it runs under (a user's, explain's, the feeds'), and a
/// source that answers nothing but failures for a whole minute is declared down instead of being asked for every
/// user.
@Suite(
    "Bounded waits and sources declared down", .serialized, .enabled(if: Harness.isEnabled, Harness.skip),
    .timeLimit(.minutes(2)))
struct BoundedWaitTests {
    static func googleRows(_ prefix: String, count: Int) -> [UserRow] {
        (0..<count).map { GoogleWorld.row(String(format: "\(prefix)-%03d", $0), end: -2) }
    }

    /// The rows as stored, by id (to show a fetch error leaves them untouched).
    static func stored(_ rows: [UserRow], _ h: Harness) async throws -> [String: UserRow] {
        var stored: [String: UserRow] = [:]
        for row in rows { stored[row.id] = try await h.user(row.id) }
        return stored
    }

    @Test(
        "Google's token endpoint answering 429 with Retry-After: 59: with 2 s deadlines the night finishes in seconds, every Google user fetch_error"
    )
    func tokenEndpointRetryAfter() async throws {
        try await GoogleHarness.with { h, google in
            let rows = Self.googleRows("g", count: 6)
            try await h.db.insertUsers(rows)
            let before = try await Self.stored(rows, h)
            await google.setTokenEndpointRateLimited(retryAfter: "59")
            let start = ContinuousClock.now
            let result = try await h.run {
                $0.maxDowngradeRatio = 1
                $0.userDeadline = .seconds(2)
                $0.feedDeadline = .seconds(2)
            }
            let took = ContinuousClock.now - start
            #expect(took < .seconds(30), "the run took \(took)")
            #expect(result.exitStatus == .userErrors)
            let report = try h.report(result)
            for row in rows {
                let line = try #require(report[row.id])
                #expect(line.drift.contains("fetch_error") && !line.applied, "\(row.id): \(line.drift)")
                #expect(line.error?.contains("deadline") == true, "\(row.id): \(line.error ?? "no error")")
                #expect(try await h.user(row.id) == before[row.id], "untouched")
            }
            #expect(result.summary.feeds?["google_play"]?.error != nil, "the feed cut off by its deadline is reported failed")
        }
    }

    @Test(
        "a source answering 503 to everything is declared down: its remaining users are not asked, the summary names it, exit 1, the others reconciled"
    )
    func sourceDeclaredDown() async throws {
        let account = try GoogleTestServiceAccount.generate(tokenURI: "{base}/token")
        let google = GooglePlaySimulator(account: account, packageName: GoogleWorld.package)
        try await Harness.with(routes: [google], extra: GoogleWorld.environment(account)) { h in
            let ordinary = try await h.seedChanging(prefix: "u", count: 4)
            let rows = Self.googleRows("g", count: 40)
            try await h.db.insertUsers(rows)
            let before = try await Self.stored(rows, h)
            await google.setDown(status: 503)
            // A minute of the health clock passes in 100 ms: the window is the production one, time is faster.
            let origin = ContinuousClock.now
            let result = try await h.run {
                $0.maxDowngradeRatio = 1
                $0.concurrency = 2
                $0.tuning.healthClock = { origin + (ContinuousClock.now - origin) * 600 }
            }
            #expect(result.exitStatus == .userErrors)
            let down = try #require(result.summary.sourcesDown)
            #expect(down.map(\.source) == ["google_play"])
            #expect(down.first?.reason.contains("no answer but 429/5xx/timeouts for 60 s") == true, "\(down)")
            let asked = await google.counters().downAnswers
            #expect(asked < rows.count, "Google was asked \(asked) times for \(rows.count) users")
            let report = try h.report(result)
            var notAsked = 0
            for row in rows {
                let line = try #require(report[row.id])
                #expect(line.drift.contains("fetch_error") && !line.applied)
                if line.error?.contains("google_play was declared down") == true { notAsked += 1 }
                #expect(try await h.user(row.id) == before[row.id], "untouched")
            }
            #expect(notAsked >= rows.count / 2, "\(notAsked) users named the source down")
            for id in ordinary { #expect(report[id]?.applied == true, "\(id) reconciled") }
            let json = try String(contentsOf: result.folder.appendingPathComponent("summary.json"), encoding: .utf8)
            #expect(json.contains("\"sources_down\""))
            let markdown = try String(contentsOf: result.folder.appendingPathComponent("summary.md"), encoding: .utf8)
            #expect(markdown.contains("source down: google_play"))
            #expect(TerminalSummary.text(result.summary, folder: result.folder).contains("DOWN        google_play since"))
        }
    }

    @Test("explain against a stalling source returns within its deadline: in process a fetch error naming it, the binary exit 1")
    func explainDeadline() async throws {
        try await Harness.with(extra: ["SUBRECON_HTTP_TIMEOUT_SECONDS": "30"]) { h in
            try await h.seed(h.row("e-stall", tier: 1, "active", end: -3), Harness.subscription(expires: 27))
            await h.revenueCat.setFault(.trickle(pause: .milliseconds(400)), for: "e-stall")
            let start = ContinuousClock.now
            let explanation = try await Commands.explain(
                environment: h.env, userID: "e-stall", asOf: Harness.asOf, logger: h.logger, deadline: .seconds(2))
            #expect(ContinuousClock.now - start < .seconds(15))
            #expect(explanation.sourceErrored)
            #expect(explanation.error?.contains("explain's deadline of 2") == true, "\(explanation.error ?? "no error")")

            let (process, _) = try SubreconBinary.start(
                ["explain", "e-stall", "--as-of", ISO8601.string(Harness.asOf), "--json", "--timeout", "2"],
                environment: h.env.values, directory: h.reportDirectory)
            let status = try await SubreconBinary.wait(process, limit: .seconds(30))
            #expect(status == 1, "explain ended \(status.map(String.init) ?? "killed after 30 s")")
        }
    }
}
