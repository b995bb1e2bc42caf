import Foundation
import Logging
import Subrecon
import SubreconCore
import SubreconDemo
import SubreconReports
import Synchronization
import Testing

@Suite(
    "subrecon demo",
    .serialized,
    .enabled(
        if: FileManager.default.fileExists(atPath: "/usr/lib/postgresql") || ProcessInfo.processInfo.environment["SUBRECON_REQUIRE_DATABASE"] == "1",
        "PostgreSQL server binaries are not installed (apt-get install -y postgresql-15)"))
struct DemoTests {
    /// The story `subrecon demo` prints after its run: one line per seeded user, what the run did and why.
    static let story = [
        "demo: what each sample user shows (from drift.json):",
        "  demo-01-missed-expiration    downgrade missed_expiration                                paid period over, webhook lost → downgrade, RESUBSCRIBE intent",
        "  demo-02-missed-renewal       extend missed_renewal                                      renewal webhook lost → extend",
        "  demo-03-restored             restore missed_renewal;product_change                      resubscribed, never granted → restore",
        "  demo-04-billing-issue        status_change billing_issue_entered                        card declined, in grace → billing_issue + UPDATE_PAYMENT intent",
        "  demo-05-billing-recovered    extend missed_renewal;billing_issue_recovered              payment fixed → active again",
        "  demo-06-grace-expired        downgrade grace_expired                                    grace over → downgrade",
        "  demo-07-missed-refund        downgrade missed_refund                                    refunded → revoke",
        "  demo-08-product-change       upgrade missed_renewal;product_change                      upgraded to pro → upgrade",
        "  demo-09-sandbox-only         downgrade missed_expiration;sandbox_ignored                TestFlight purchase in production → never entitles",
        "  demo-10-unknown-product      skipped unknown_product                                    product missing from product_tiers → skipped",
        "  demo-11-unknown-at-source    skipped unknown_at_source                                  RevenueCat does not know the user (201) → never downgraded",
        "  demo-12-revenuecat-down      skipped fetch_error                                        RevenueCat 503 on every try → fetch_error, untouched",
        "  demo-13-rate-limited         extend missed_renewal                                      429 once, retried after backoff_ms → extend",
        "  demo-14-in-sync              none in_sync                                               nothing to change",
        "  demo-15-lifetime             restore missed_renewal;product_change                      bought lifetime → restore",
        "  demo-16-google-paused        downgrade missed_expiration                                Google Play pause → paused, tier removed",
        "  demo-17-stripe-canceled      extend missed_renewal                                      Stripe renewal with auto-renew off → extend, canceled",
        "  demo-18-lapsed-still-lapsed  none in_sync                                               lapsed and still lapsed → in sync",
        "  demo-19-canceled-lapsed      status_change                                              canceled then expired → status expired",
        "  demo-20-apple-renewed        extend missed_renewal;source_conflict                      RevenueCat lags, Apple says renewed → extend, source_conflict",
        "  demo-21-apple-revoked        downgrade missed_refund;source_conflict                    Apple revoked (refund) while RevenueCat still grants → revoke, source_conflict",
        "  demo-22-apple-grace          status_change billing_issue_entered;source_conflict        Apple billing grace period → billing_issue, UPDATE_PAYMENT",
        "  demo-23-apple-forged         skipped verification_failed                                signature by an untrusted chain → verification_failed, untouched",
        "  demo-24 … demo-33            extend missed_renewal                                      ordinary renewals the webhooks missed",
    ].joined(separator: "\n")

    @Test("the demo runs the real job and its summary matches its reports, covering every drift kind it seeds")
    func demo() async throws {
        let reports = FileManager.default.temporaryDirectory.appendingPathComponent("subrecon-demo-test-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: reports) }
        // The operator's own settings never reach the demo's run: it points the job at its own database and simulator.
        let environment = Environment(
            ProcessInfo.processInfo.environment.merging([
                "DATABASE_URL": "postgres://nobody@127.0.0.1:1/nowhere", "REVENUECAT_API_KEY": "sk_not_the_demo",
                "REVENUECAT_BASE_URL": "http://127.0.0.1:1",
            ]) { $1 })
        let said = Mutex<[String]>([])
        let result = try await DemoRunner.run(
            environment: environment, reportDirectory: reports, keep: false, logger: Logger(label: "demo-test"), progress: nil,
            say: { line in said.withLock { $0.append(line) } })
        let lines = said.withLock { $0 }
        #expect(lines.count == 4)
        #expect(lines.first?.hasPrefix("demo: PostgreSQL started on 127.0.0.1:") == true)
        #expect(lines.dropFirst().first?.hasPrefix("demo: store simulator listening on http://127.0.0.1:") == true)
        #expect(lines.dropFirst(2).first == "demo: seeded 34 users and 7 products; running `subrecon run` against them")
        #expect(lines.last == Self.story)
        let rows = try JSONDecoder().decode(
            [ReportRow].self, from: Data(contentsOf: result.folder.appendingPathComponent("drift.json")))
        #expect(rows.count == result.summary.candidates)
        #expect(rows.filter(\.applied).count == result.summary.applied)
        for action in Action.allCases {
            #expect(rows.filter { $0.action == action.rawValue }.count == result.summary.actions[action.rawValue] ?? 0)
        }
        for kind in Drift.allCases {
            #expect(rows.filter { $0.drift.contains(kind.rawValue) }.count == result.summary.drift[kind.rawValue] ?? 0)
        }
        let seen = Set(rows.flatMap(\.drift))
        let expected = Set(Drift.allCases.map(\.rawValue)).subtracting(["concurrent_update"])
        #expect(expected.subtracting(seen).isEmpty, "demo misses drift kinds: \(expected.subtracting(seen).sorted())")
        #expect(result.summary.valve?.tripped == false)
        let intents = try JSONSerialization.jsonObject(with: Data(contentsOf: result.folder.appendingPathComponent("push_intents.json"))) as? [Any]
        #expect(intents?.count == result.summary.intentsQueued)
        let text = TerminalSummary.text(result.summary, folder: result.folder)
        #expect(text.contains("candidates  \(result.summary.candidates)"))
    }
}

@Suite("subrecon demo reads only the environment it is given")
struct DemoEnvironmentTests {
    @Test("SUBRECON_PG_BIN comes from the Environment passed in: a folder without initdb fails the demo with exit 69")
    func postgresBinariesFromTheGivenEnvironment() async throws {
        let reports = FileManager.default.temporaryDirectory.appendingPathComponent("subrecon-demo-env-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: reports) }
        let missing = FileManager.default.temporaryDirectory.appendingPathComponent("no-postgres-here-\(UUID().uuidString)")
        let said = Mutex<[String]>([])
        let failure = await #expect(throws: CommandFailure.self) {
            try await DemoRunner.run(
                environment: Environment(["SUBRECON_PG_BIN": missing.path]), reportDirectory: reports, keep: false,
                logger: Logger(label: "demo-test"), progress: nil, say: { line in said.withLock { $0.append(line) } })
        }
        #expect(failure?.status == .unavailable)
        #expect(failure?.description.hasPrefix("could not start a local PostgreSQL: ") == true)
        #expect(failure?.description.contains(missing.path) == true)
        #expect(said.withLock { $0 }.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: reports.path))
    }
}
