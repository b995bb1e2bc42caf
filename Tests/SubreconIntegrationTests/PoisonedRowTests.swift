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

/// One bad row is one user's error, never the night's (docs/CONTRACT.md, Database): a timestamp no instant can carry
/// (`-infinity` anywhere, `infinity` in `updated_at`) makes that row `row_error`, untouched, and the night goes on
/// (exit 1); `infinity` in `subscription_end_date` or `grace_period_ends_at` ("no end", as some apps write a lifetime
/// purchase) reads as NULL does, and is written over only by a change the truth requires.
@Suite("Infinite timestamps in users", .serialized, .enabled(if: Harness.isEnabled, Harness.skip), .timeLimit(.minutes(3)))
struct PoisonedRowTests {
    /// The rows a value no instant can carry poisons, each a candidate by a rule, and the column it poisons.
    static let poisoned: [(id: String, column: String, value: String)] = [
        ("p-end-minus", "subscription_end_date", "-infinity"),
        ("p-grace-minus", "grace_period_ends_at", "-infinity"),
        ("p-updated-minus", "updated_at", "-infinity"),
        ("p-updated-plus", "updated_at", "infinity"),
    ]

    /// Good users `a-000`...`a-003`; the poisoned rows (all `billing_issue`, so a rule selects each whatever its
    /// dates); and four rows holding `infinity` as "no end":
    /// - `l-renewed`: billing issue, end `infinity`; RevenueCat renewed it (a later end the truth requires);
    /// - `l-lifetime`: billing issue, end `infinity`; RevenueCat lists a lifetime purchase (no end: the end is kept);
    /// - `l-grace`: active, ended two days ago, grace `infinity`: the paid period is over (rule 1 reads the grace as
    ///   NULL), RevenueCat says expired;
    /// - `l-lapsed`: expired with end `infinity`: no end date, so not recently lapsed, not a candidate.
    func seed(_ h: Harness) async throws -> [String] {
        let good = try await h.seedChanging(prefix: "a", count: 4)
        for (id, _, _) in Self.poisoned {
            try await h.seed(h.row(id, tier: 1, "billing_issue", end: -2, grace: 3), Harness.subscription(expires: 28))
        }
        try await h.seed(h.row("l-renewed", tier: 1, "billing_issue", end: 1), Harness.subscription(purchased: -2, expires: 28))
        try await h.db.insertUsers([h.row("l-lifetime", tier: 1, "billing_issue", end: 1)])
        await h.revenueCat.setSubscriber(
            SimulatedSubscriber(
                firstSeen: Harness.day(-300),
                nonSubscriptions: [
                    SimulatedNonSubscription(
                        productID: "premium_monthly", id: "np_l_lifetime", purchaseDate: Harness.day(-100), storeTransactionID: "900001")
                ]), for: "l-lifetime")
        try await h.seed(h.row("l-grace", tier: 1, "active", end: -2, grace: 3), Harness.subscription(expires: -2))
        try await h.seed(h.row("l-lapsed", tier: 0, "expired", end: -2), Harness.subscription(expires: -2))
        for (id, column, value) in Self.poisoned {
            try await h.client.query(PostgresQuery(unsafeSQL: "update users set \(column) = '\(value)' where id = '\(id)'"))
        }
        try await h.client.query(
            """
            update users set subscription_end_date = 'infinity' where id in ('l-renewed', 'l-lifetime', 'l-lapsed')
            """)
        try await h.client.query("update users set grace_period_ends_at = 'infinity' where id = 'l-grace'")
        return good
    }

    /// How many poisoned rows still hold their infinite value, with tier 1 and status `billing_issue`.
    func poisonedUntouched(_ h: Harness) async throws -> Int {
        var untouched = 0
        for (id, column, value) in Self.poisoned {
            untouched += try await h.count(
                PostgresQuery(
                    unsafeSQL: """
                        select count(*)::int from users where id = '\(id)' and \(column) = '\(value)' \
                        and current_tier = 1 and subscription_status = 'billing_issue'
                        """))
        }
        return untouched
    }

    func expectRowErrors(_ rows: [String: ReportRow]) {
        for (id, column, value) in Self.poisoned {
            let row = rows[id]
            #expect(row?.drift == ["row_error"] && row?.action == "skipped" && row?.applied == false, "\(id): \(String(describing: row))")
            #expect(row?.error?.contains("users.\(column) is \(value)") == true, "\(id): \(row?.error ?? "")")
            #expect(row?.dbEndDate == nil || column != "subscription_end_date", "an infinite date is never printed")
        }
    }

    @Test("-infinity anywhere, infinity in updated_at: that user's row_error (exit 1); the night goes on and reconciles the rest")
    func nightGoesOn() async throws {
        try await Harness.with { h in
            let good = try await seed(h)
            let result = try await h.run { $0.maxDowngradeRatio = 1 }
            #expect(result.exitStatus == .userErrors)
            let rows = try h.report(result)
            expectRowErrors(rows)
            #expect(try await poisonedUntouched(h) == Self.poisoned.count)
            let asked = await h.revenueCat.counters().requestsPerUser
            for (id, _, _) in Self.poisoned { #expect(asked[id] == nil, "no source asked about \(id)") }
            for (n, id) in good.enumerated() {
                #expect(rows[id]?.action == (n % 2 == 0 ? "downgrade" : "extend") && rows[id]?.applied == true, "\(id)")
            }
            #expect(result.summary.errors == Self.poisoned.count && result.summary.drift["row_error"] == Self.poisoned.count)

            // infinity as "no end" reads as NULL: never printed, and the truth decides.
            let renewed = try #require(rows["l-renewed"])
            #expect(renewed.dbEndDate == nil && renewed.applied && renewed.candidateReason == ["billing_issue"], "\(renewed)")
            #expect(try await h.user("l-renewed")?.endDate == Harness.day(28), "a later end the truth requires is written")
            let lifetime = try #require(rows["l-lifetime"])
            #expect(lifetime.dbEndDate == nil && lifetime.truthEndDate == nil && lifetime.applied, "\(lifetime)")
            let kept = try await h.count(
                "select count(*)::int from users where id = 'l-lifetime' and subscription_end_date = 'infinity' and subscription_status = 'active'"
            )
            #expect(kept == 1, "a lifetime's end the truth leaves without an end stays as the app wrote it")
            let grace = try #require(rows["l-grace"])
            #expect(grace.candidateReason == ["expired"] && grace.action == "downgrade" && grace.applied, "\(grace)")
            #expect(rows["l-lapsed"] == nil, "an end of infinity is no end: not recently lapsed")
            let csv = try h.csvLines(result, "drift.csv").joined(separator: "\n")
            #expect(!csv.contains("-4712") && !csv.contains("294276"), "\(csv)")
        }
    }

    @Test("--users-file, backfill, --resume and explain read the poisoned rows as row_error too")
    func everyReadSurvives() async throws {
        try await Harness.with { h in
            let good = try await seed(h)
            #expect(try await h.user("l-lapsed")?.endDate == nil, "infinity reads as NULL")
            #expect(try await h.user("l-grace")?.graceEndsAt == nil, "infinity reads as NULL")
            let ids = Self.poisoned.map(\.id)
            let named = try await h.run { $0.userIDs = ids + [good[0]] }
            #expect(named.exitStatus == .userErrors)
            expectRowErrors(try h.report(named))
            let backfill = try await h.run {
                $0.mode = .backfill
                $0.maxDowngradeRatio = 1
            }
            #expect(backfill.exitStatus == .userErrors)
            expectRowErrors(try h.report(backfill))
            #expect(try await poisonedUntouched(h) == Self.poisoned.count)

            let stop = StopSignal()
            stop.stop(reason: "test stop before any user")
            let (status, line) = try await OwnTablesTests.failure {
                _ = try await h.run {
                    $0.stop = stop
                    $0.maxDowngradeRatio = 1
                }
            }
            #expect(status == .stopped && line.contains("--resume"), "\(line)")
            let stopped = try #require(
                try await TestDatabase.scalar(
                    h.client, "select id from reconcile_runs where status <> 'completed' order by started_at desc limit 1", as: String.self)
            )
            let resumed = try await Commands.run(
                environment: h.env, options: h.options { $0.maxDowngradeRatio = 1 }, logger: h.logger, resume: stopped)
            #expect(resumed.exitStatus == .userErrors)
            expectRowErrors(try h.report(resumed))
            #expect(try await poisonedUntouched(h) == Self.poisoned.count)

            for (id, column, value) in Self.poisoned {
                let (status, line) = try await OwnTablesTests.failure {
                    _ = try await Commands.explain(environment: h.env, userID: id, asOf: Harness.asOf, logger: h.logger)
                }
                #expect(status == .userErrors && line.contains("row_error") && line.contains("users.\(column) is \(value)"), "\(line)")
            }
        }
    }
}
