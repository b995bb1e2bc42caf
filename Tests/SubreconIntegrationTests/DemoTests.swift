import Foundation
import Logging
import SubreconApp
import SubreconCore
import SubreconDatabase
import SubreconDemo
import SubreconJob
import SubreconPorts
import SubreconReports
import Synchronization
import Testing

/// What one sample user must show in a demo run's drift.json.
struct DemoExpectation: Sendable {
    var id: String
    var action: String
    var drift: [String]
    /// CONTRACT "Which users a run asks about" rules and feeds; the sweep is added when the user's bucket is the night's (it depends on the day).
    var reasons: [String]
    var sources: [String]

    init(_ id: String, _ action: String, _ drift: [String], _ reasons: [String], _ sources: [String]) {
        self.id = id
        self.action = action
        self.drift = drift
        self.reasons = reasons
        self.sources = sources
    }
}

@Suite(
    "subrecon demo",
    .serialized,
    .enabled(
        if: FileManager.default.fileExists(atPath: "/usr/lib/postgresql")
            || ProcessInfo.processInfo.environment["SUBRECON_REQUIRE_DATABASE"] == "1",
        "PostgreSQL server binaries are not installed (apt-get install -y postgresql-15)"))
struct DemoTests {
    static let rc = ["revenuecat"]
    static let rcApple = ["revenuecat", "app_store"]

    /// Run 1, every source: each user's row in drift.json (the sweep user's id depends on the night; see below).
    static let allSources: [DemoExpectation] =
        [
            .init("demo-01-missed-expiration", "downgrade", ["missed_expiration"], ["expired"], rc),
            .init("demo-02-missed-renewal", "extend", ["missed_renewal"], ["expired"], rc),
            .init("demo-03-restored", "restore", ["missed_renewal", "product_change"], ["lapsed"], rc),
            .init("demo-04-billing-issue", "status_change", ["billing_issue_entered"], ["expired"], rc),
            .init("demo-05-billing-recovered", "extend", ["missed_renewal", "billing_issue_recovered"], ["billing_issue"], rc),
            .init("demo-06-grace-expired", "downgrade", ["grace_expired"], ["expired", "billing_issue"], rc),
            .init("demo-07-missed-refund", "downgrade", ["missed_refund"], ["expired"], rc),
            .init("demo-08-product-change", "upgrade", ["missed_renewal", "product_change"], ["expired"], rc),
            .init("demo-09-sandbox-only", "downgrade", ["missed_expiration", "sandbox_ignored"], ["expired"], rc),
            .init("demo-10-unknown-product", "skipped", ["unknown_product"], ["expired"], rc),
            .init("demo-11-unknown-at-source", "skipped", ["unknown_at_source"], ["expired"], rc),
            .init("demo-12-revenuecat-down", "skipped", ["fetch_error"], ["expired"], rc),
            .init("demo-13-rate-limited", "extend", ["missed_renewal"], ["expired"], rc),
            .init("demo-14-in-sync", "none", ["in_sync"], ["billing_issue"], rc),
            .init("demo-15-lifetime", "restore", ["missed_renewal", "product_change"], ["lapsed"], rcApple),
            .init("demo-16-google-paused", "downgrade", ["missed_expiration"], ["expired"], rc),
            .init("demo-17-stripe-canceled", "extend", ["missed_renewal"], ["expired"], rc),
            .init("demo-18-lapsed-still-lapsed", "none", ["in_sync"], ["lapsed"], rc),
            .init("demo-19-canceled-lapsed", "status_change", [], ["lapsed"], rc),
            .init("demo-20-apple-renewed", "extend", ["missed_renewal", "source_conflict"], ["expired"], rcApple),
            .init("demo-21-apple-revoked", "downgrade", ["missed_refund", "source_conflict"], ["expired"], rcApple),
            .init("demo-22-apple-grace", "status_change", ["billing_issue_entered", "source_conflict"], ["expired"], rcApple),
            .init("demo-23-apple-forged", "skipped", ["verification_failed"], ["expired"], rcApple),
            .init(
                "demo-34-legacy-receipt", "extend", ["missed_renewal", "source_conflict"], ["expired"],
                ["revenuecat", "app_store_receipt", "app_store"]),
        ] + (24...33).map { .init(String(format: "demo-%02d-renewal", $0), "extend", ["missed_renewal"], ["expired"], rc) } + [
            // Stripe next to RevenueCat: Stripe is the authority for its own purchase.
            .init(
                "demo-35-stripe-conflict", "downgrade", ["missed_expiration", "source_conflict"], ["expired"], ["revenuecat", "stripe"]),
            .init(
                "demo-36-stripe-past-due", "extend", ["missed_renewal", "billing_issue_entered"], ["expired"], ["revenuecat", "stripe"]),
            .init("demo-37-google-renewed", "extend", ["missed_renewal"], ["expired"], ["revenuecat", "google_play"]),
            .init(
                "demo-38-google-grace", "extend", ["missed_renewal", "billing_issue_entered"], ["expired"], ["revenuecat", "google_play"]),
            // Inside its paid period: only Apple's notification history names it.
            .init("demo-39-apple-feed-refund", "downgrade", ["missed_refund"], ["apple_notification"], rcApple),
            // Inside its paid period: only Google Play's voided purchases name it.
            .init("demo-41-google-voided", "downgrade", ["missed_refund"], ["google_voided"], ["revenuecat", "google_play"]),
            // Inside its paid period: only Stripe's events name it.
            .init("demo-42-stripe-event-canceled", "downgrade", ["missed_expiration"], ["stripe_event"], ["revenuecat", "stripe"]),
            // Finance (CONTRACT "Finance figures"): family sharing and trials are never revenue; three refunds put a user on the review list.
            .init("demo-43-family-refund", "downgrade", ["missed_refund"], ["expired"], rcApple),
            .init("demo-44-trial-restored", "restore", ["missed_renewal"], ["lapsed"], rc),
            .init("demo-45-serial-refunder", "downgrade", ["missed_refund"], ["expired"], rcApple),
            // Whose purchase it is (CONTRACT "Whose purchase it is").
            .init("demo-60-google-resubscribed", "extend", ["missed_renewal"], ["expired"], ["revenuecat", "google_play"]),
            .init("demo-61-apple-newer-purchase", "extend", ["missed_renewal", "stale_identifier"], ["expired"], rcApple),
            .init("demo-62-transferred-away", "skipped", ["ownership_conflict"], ["expired"], rcApple),
            .init("demo-64-lost-first-purchase", "restore", ["missed_renewal", "linked_purchase"], ["linked_purchase"], rcApple),
            .init(
                "demo-65-web-unrecorded", "restore", ["missed_renewal", "linked_purchase"], ["linked_purchase"], ["revenuecat", "stripe"]),
        ]

    /// Run 2, no RevenueCat: each user asked of its own store only.
    static let withoutRevenueCat: [DemoExpectation] = [
        .init("demo-51-apple-only", "extend", ["missed_renewal"], ["expired"], ["app_store"]),
        .init("demo-52-apple-only-lapsed", "downgrade", ["missed_expiration"], ["expired"], ["app_store"]),
        .init("demo-53-stripe-web", "extend", ["missed_renewal"], ["expired"], ["stripe"]),
        .init("demo-54-google-direct", "extend", ["missed_renewal"], ["expired"], ["google_play"]),
        // The period's charge refunded in full: refunded, whatever the subscription's status says.
        .init("demo-55-stripe-refund", "downgrade", ["missed_refund"], ["expired"], ["stripe"]),
    ]

    static func rows(_ result: RunResult) throws -> [String: ReportRow] {
        let data = try Data(contentsOf: result.folder.appendingPathComponent("drift.json"))
        return Dictionary(uniqueKeysWithValues: try JSONDecoder().decode([ReportRow].self, from: data).map { ($0.userID, $0) })
    }

    /// The summary's numbers are the report's rows: candidates, applied, per action, per drift kind, per reason.
    static func summaryMatchesRows(_ result: RunResult) throws {
        let rows = Array(try rows(result).values)
        let summary = result.summary
        #expect(rows.count == summary.candidates)
        #expect(rows.filter(\.applied).count == summary.applied)
        for action in Action.allCases {
            #expect(rows.filter { $0.action == action.rawValue }.count == summary.actions[action.rawValue] ?? 0, "\(action)")
        }
        for kind in Drift.allCases {
            #expect(rows.filter { $0.drift.contains(kind.rawValue) }.count == summary.drift[kind.rawValue] ?? 0, "\(kind)")
        }
        for reason in CandidateReason.ruleReasons + StoreRegistry.feedReasons + [.sweep, .usersFile, .backfill] {
            #expect(
                rows.filter { $0.candidateReason.contains(reason.rawValue) }.count == summary.candidateReasons?[reason.rawValue] ?? 0,
                "\(reason)")
        }
        #expect(summary.valve?.tripped == false)
        let intents =
            try JSONSerialization.jsonObject(with: Data(contentsOf: result.folder.appendingPathComponent("push_intents.json"))) as? [Any]
        #expect(intents?.count == summary.intentsQueued)
        #expect(TerminalSummary.text(summary, folder: result.folder).contains("candidates  \(summary.candidates)"))
    }

    /// Each expected user's row, and its story line: the same columns, read back from drift.json.
    static func check(_ expected: [DemoExpectation], result: RunResult, story: String) throws {
        let rows = try rows(result)
        let asOf = try #require(ISO8601.date(result.summary.asOf))
        let night = CandidateQuery.sweepNight(asOf: asOf, days: 30)
        let lines = story.split(separator: "\n").map { $0.split(separator: " ").map(String.init) }
        for user in expected {
            let row = try #require(rows[user.id], "\(user.id) is a candidate")
            let swept = row.dbTier > 0 && CandidateQuery.sweepBucket(of: user.id, days: 30) == night
            let reasons = user.reasons + (swept ? ["sweep"] : [])
            #expect(row.action == user.action, "\(user.id)")
            #expect(row.drift == user.drift, "\(user.id)")
            #expect(row.candidateReason == reasons, "\(user.id)")
            #expect(row.sources == user.sources, "\(user.id)")
            func list(_ values: [String]) -> String { values.isEmpty ? "-" : values.joined(separator: ";") }
            let fields = [user.action, list(user.drift), list(reasons), list(user.sources)]
            if user.id.hasSuffix("-renewal") {
                #expect(lines.contains { $0.first == "demo-24-renewal…demo-33-renewal" && $0[1] == "extend" }, "the renewals' line")
            } else {
                #expect(lines.contains { Array($0.prefix(5)) == [user.id] + fields }, "story line of \(user.id)")
            }
        }
    }

    @Test("the demo runs the real job twice (every source, then no RevenueCat); summaries match reports; each user shows what it claims")
    func demo() async throws {
        let reports = FileManager.default.temporaryDirectory.appendingPathComponent("subrecon-demo-test-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: reports) }
        // The operator's own settings never reach the demo's runs: they point the job at its own database and simulators.
        let environment = ProcessEnvironment(
            ProcessInfo.processInfo.environment.merging([
                "DATABASE_URL": "postgres://nobody@127.0.0.1:1/nowhere", "REVENUECAT_API_KEY": "sk_not_the_demo",
                "REVENUECAT_BASE_URL": "http://127.0.0.1:1", "STRIPE_API_KEY": "sk_not_the_demo", "STRIPE_BASE_URL": "http://127.0.0.1:1",
                "GOOGLE_PLAY_SERVICE_ACCOUNT": "{}", "GOOGLE_PLAY_PACKAGE_NAME": "not.the.demo", "APP_STORE_BASE_URL": "http://127.0.0.1:1",
            ]) { $1 })
        let said = Mutex<[String]>([])
        let result = try await DemoRunner.run(
            environment: environment, reportDirectory: reports, keep: false, explain: "demo-39-apple-feed-refund",
            logger: Logger(label: "demo-test"), progress: nil, say: { line in said.withLock { $0.append(line) } })
        var lines = said.withLock { $0 }
        try #require(lines.count == 14)  // with `subrecon finance` over each database's night at the end
        #expect(lines[0].hasPrefix("demo: PostgreSQL started on 127.0.0.1:"))
        #expect(lines[1].hasPrefix("demo: store simulator listening on http://127.0.0.1:"))
        // --explain: `subrecon explain` of the feed user before run 1, the row still active, every source saying refunded.
        let explained = lines.remove(at: 2).split(separator: "\n").map(String.init)
        // `subrecon doctor` before run 1: every check holds against the demo's database and simulators.
        let doctor = lines.remove(at: 2).split(separator: "\n").map(String.init)
        #expect(doctor.first?.hasPrefix("demo: subrecon doctor, before run 1 (") == true)
        #expect(doctor.first?.hasSuffix("exit 0):") == true, "\(doctor)")
        let checked = doctor.dropFirst().map { String($0.dropFirst(4).prefix { $0 != ":" }) }
        #expect(
            checked == [
                "configuration", "database", "schema", "users", "role", "revenuecat", "revenuecat_v2", "app_store", "app_store receipts",
                "google_play", "stripe",
            ], "\(doctor)")
        #expect(doctor.dropFirst().allSatisfy { $0.hasPrefix("  ✓ ") || $0.hasPrefix("  – app_store receipts:") }, "\(doctor)")
        #expect(explained.first?.hasPrefix("demo: subrecon explain demo-39-apple-feed-refund --as-of ") == true)
        #expect(explained.first?.hasSuffix(", before run 1 (asks every source, changes nothing):") == true)
        #expect(explained.contains { $0.hasPrefix("  row: tier 1, active, ends ") })
        #expect(explained.contains("  revenuecat: answered") && explained.contains("  app_store: answered"))
        #expect(explained.filter { $0 == "      → not entitled (refunded)" }.count == 2)
        #expect(explained.contains { $0.hasPrefix("  verdict: downgrade [missed_refund]; truth: tier 0, refunded") })
        #expect(lines[2].hasPrefix("demo: run 1 of 2, every source ("))
        #expect(lines[2].hasSuffix(": seeded 50 users and 9 products; running `subrecon run` against them"))
        #expect(lines[3].hasPrefix("demo: run 1, every source: what each sample user shows (from drift.json)\n"))
        #expect(lines[4] == TerminalSummary.text(result.allSources.summary, folder: result.allSources.folder))
        #expect(lines[5].hasPrefix("demo: run 2 of 2, no RevenueCat"))
        #expect(lines[5].hasSuffix(": seeded 5 users; running `subrecon run` against them"))
        #expect(lines[6].hasPrefix("demo: run 2, no RevenueCat: what each sample user shows (from drift.json)\n"))
        #expect(lines[7] == TerminalSummary.text(result.withoutRevenueCat.summary, folder: result.withoutRevenueCat.folder))
        // `subrecon finance` over the demo's night, once per database: complete, its files written apart from the runs.
        for (index, folder) in [(8, "finance"), (10, "finance/without-revenuecat")] {
            #expect(lines[index].hasPrefix("demo: subrecon finance --from ") && lines[index].hasSuffix("; read only):"))
            #expect(lines[index + 1].contains("no gaps: every night of every shard completed"), "\(lines[index + 1])")
            let files = try FileManager.default.contentsOfDirectory(atPath: reports.appendingPathComponent(folder).path)
            #expect(files.filter { $0.hasPrefix("finance-") }.count == 5, "\(files)")
        }
        #expect(lines[9].contains("restored"), "run 1 restores users: \(lines[9])")
        #expect(result.exitStatus == .ok)

        // Run 1: every source.
        let first = result.allSources
        try Self.summaryMatchesRows(first)
        try Self.check(Self.allSources, result: first, story: lines[3])
        let rows = try Self.rows(first)
        let asOf = try #require(ISO8601.date(first.summary.asOf))
        let swept = DemoRunner.sweptUserID(asOf: asOf)
        #expect(rows[swept]?.candidateReason == ["sweep"], "no CONTRACT 'Which users a run asks about' rule and no feed: the sweep alone")
        #expect(rows[swept]?.action == "upgrade" && rows[swept]?.drift.contains("product_change") == true)
        #expect(rows[swept]?.truthTier == 2 && rows[swept]?.applied == true)
        #expect(lines[3].split(separator: "\n").contains { $0.hasPrefix("  \(swept) ") }, "the sweep user has its story line")
        #expect(Set(rows.keys) == Set(Self.allSources.map(\.id) + [swept]), "every seeded user is a candidate, nobody else")
        let conflict = try #require(rows["demo-35-stripe-conflict"]?.conflicts.first)
        #expect(conflict.store == .stripe && conflict.revenueCat.entitled && !conflict.storeView.entitled, "Stripe wins")
        #expect(rows["demo-35-stripe-conflict"]?.truthTier == 0)
        #expect(rows["demo-36-stripe-past-due"]?.truthStatus == "billing_issue" && rows["demo-36-stripe-past-due"]?.truthTier == 1)
        #expect(rows["demo-36-stripe-past-due"]?.pushIntent == ["billing_issue"])
        #expect(rows["demo-37-google-renewed"]?.truthStatus == "active")
        #expect(
            rows["demo-38-google-grace"]?.truthStatus == "billing_issue" && rows["demo-38-google-grace"]?.pushIntent == ["billing_issue"])
        let refund = try #require(rows["demo-39-apple-feed-refund"])
        #expect(
            refund.dbTier == 1 && refund.dbStatus == "active" && (refund.dbEndDate ?? .distantPast) > asOf.addingTimeInterval(300 * 86_400))
        #expect(refund.truthTier == 0 && refund.truthStatus == "refunded" && refund.applied)
        let feed = try #require(first.summary.feeds?["app_store"])
        // The refund's row, the lost first purchase linked through appAccountToken, and one orphan (CONTRACT "Whose purchase it is").
        #expect(feed.entries == 3 && feed.matchedUsers == 1 && feed.unmatched == 2 && feed.error == nil)
        #expect(feed.linked == 1 && feed.orphans == 1)
        let lostRow = try #require(rows["demo-64-lost-first-purchase"])
        #expect(lostRow.truthTier == 1 && lostRow.applied)
        let inventory = try #require(first.summary.feeds?["stripe_inventory"])
        #expect(inventory.error == nil && inventory.linked == 1)
        let orphans = try String(contentsOf: first.folder.appendingPathComponent("orphans.csv"), encoding: .utf8)
        #expect(orphans.contains("app_store,200000099,premium_monthly,active,"))
        #expect((first.summary.orphans?.count ?? 0) >= 1)
        let voided = try #require(first.summary.feeds?["google_play"])
        #expect(voided.entries == 1 && voided.matchedUsers == 1 && voided.unmatched == 0 && voided.error == nil)
        // Finance (CONTRACT "Finance figures"): the family member's refund and the trial are no revenue; the serial refunder is listed.
        let summaryFinance = first.summary
        #expect(summaryFinance.refundReview?.users == 1, "demo-45 refunded three times within a year")
        let review = try String(contentsOf: first.folder.appendingPathComponent("refund_review.csv"), encoding: .utf8)
        #expect(review.contains("demo-45-serial-refunder"))
        let void = try #require(rows["demo-41-google-voided"])
        #expect(void.dbTier == 1 && (void.dbEndDate ?? .distantPast) > asOf.addingTimeInterval(200 * 86_400))
        #expect(void.truthTier == 0 && void.applied)
        let seen = Set(rows.values.flatMap(\.drift))
        // row_error needs an app's view exposing a NULL; the demo's own users table cannot hold one (UnreadableRowTests).
        // write_refused needs row-level security against the job's role (OperatorDatabaseTests).
        let expected = Set(Drift.allCases.map(\.rawValue)).subtracting(["concurrent_update", "row_error", "write_refused"])
        #expect(expected.subtracting(seen).isEmpty, "demo misses drift kinds: \(expected.subtracting(seen).sorted())")
        for source in ["revenuecat", "app_store", "stripe", "google_play"] {
            #expect((first.summary.requests[source]?.requests ?? 0) > 0, "run 1 asked \(source)")
        }

        // Run 2: no RevenueCat, a database of its own.
        let second = result.withoutRevenueCat
        #expect(second.exitStatus == .ok)
        try Self.summaryMatchesRows(second)
        try Self.check(Self.withoutRevenueCat, result: second, story: lines[6])
        #expect(Set(try Self.rows(second).keys) == Set(Self.withoutRevenueCat.map(\.id)), "run 1's users are not in run 2's database")
        #expect(second.summary.sources["revenuecat"]?.contains("not configured") == true)
        #expect(second.summary.requests["revenuecat"] == nil)
        #expect(try Self.rows(second)["demo-53-stripe-web"]?.truthStatus == "canceled")
        #expect(try Self.rows(second)["demo-52-apple-only-lapsed"]?.pushIntent == ["expired"])
        let stripeRefund = try #require(try Self.rows(second)["demo-55-stripe-refund"])
        #expect(stripeRefund.truthStatus == "refunded" && stripeRefund.truthTier == 0 && stripeRefund.applied)
        #expect(
            [stripeRefund.priceAmount, stripeRefund.priceCurrency, stripeRefund.priceBasis] == ["24", "USD", "paid"],
            "the refunded value is Stripe's amount_refunded")
        #expect(second.summary.refundReview?.newRefunds == 1, "the Stripe refund is kept in refunds_seen")
    }

    @Test("--explain with an id no sample user has fails the demo with exit 66 before any run")
    func explainUnknownUser() async throws {
        let reports = FileManager.default.temporaryDirectory.appendingPathComponent("subrecon-demo-explain-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: reports) }
        let said = Mutex<[String]>([])
        let failure = await #expect(throws: CommandFailure.self) {
            try await DemoRunner.run(
                environment: ProcessEnvironment([:]), reportDirectory: reports, keep: false, explain: "nobody-here",
                logger: Logger(label: "demo-test"), progress: nil, say: { line in said.withLock { $0.append(line) } })
        }
        #expect(failure?.status == .noInput)
        #expect(failure?.description.contains("nobody-here") == true)
        #expect(!said.withLock { $0 }.contains { $0.hasPrefix("demo: run 1 of 2") }, "no run started")
        #expect(!FileManager.default.fileExists(atPath: reports.path), "no run folder")
    }
}

@Suite("subrecon demo reads only the environment it is given")
struct DemoEnvironmentTests {
    @Test("SUBRECON_PG_BIN comes from the ProcessEnvironment passed in: a folder without initdb fails the demo with exit 69")
    func postgresBinariesFromTheGivenEnvironment() async throws {
        let reports = FileManager.default.temporaryDirectory.appendingPathComponent("subrecon-demo-env-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: reports) }
        let missing = FileManager.default.temporaryDirectory.appendingPathComponent("no-postgres-here-\(UUID().uuidString)")
        let said = Mutex<[String]>([])
        let failure = await #expect(throws: CommandFailure.self) {
            try await DemoRunner.run(
                environment: ProcessEnvironment(["SUBRECON_PG_BIN": missing.path]), reportDirectory: reports, keep: false,
                logger: Logger(label: "demo-test"), progress: nil, say: { line in said.withLock { $0.append(line) } })
        }
        #expect(failure?.status == .unavailable)
        #expect(failure?.description.hasPrefix("could not start a local PostgreSQL: ") == true)
        #expect(failure?.description.contains(missing.path) == true)
        #expect(said.withLock { $0 }.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: reports.path))
    }
}

@Suite("the demo's sample users")
struct DemoScenarioTests {
    @Test("every night of the 30-night sweep has a demo sweep user whose bucket is that night")
    func sweepUserForEveryNight() {
        for night in 0..<30 {
            let asOf = Date(timeIntervalSince1970: Double(20_000 + night) * 86_400 + 3_600)
            let id = DemoRunner.sweptUserID(asOf: asOf)
            #expect(CandidateQuery.sweepBucket(of: id, days: 30) == CandidateQuery.sweepNight(asOf: asOf, days: 30), "\(id)")
        }
    }
}
