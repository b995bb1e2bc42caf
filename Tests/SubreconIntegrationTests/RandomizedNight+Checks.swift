import Foundation
import PostgresNIO
import StoreSimulator
import SubreconApp
import SubreconCore
import SubreconDatabase
import SubreconJob
import SubreconPorts
import SubreconReports
import SubreconTestKit
import SubreconTestSupport
import Testing

extension RandomizedNightTests {
    /// The whole row a user must end with when the stores state the truth at T (CONTRACT "Sources and the decision": tier, status, end date,
    /// grace end, product and source come from the line granting the tier, or with nothing entitled from the most
    /// recent line), and the push intents the change calls for (CONTRACT "Applying").
    struct Expected: CustomStringConvertible {
        var tier: Int
        var status: String
        var end: Date?
        var grace: Date?
        var product: String?
        var source: String?

        /// Entitled to `tier` until `end` (in days from T).
        static func entitled(
            _ tier: Int, _ status: String = "active", end: Double, grace: Double? = nil, product: String, source: String
        ) -> Expected {
            Expected(tier: tier, status: status, end: Harness.day(end), grace: grace.map(Harness.day), product: product, source: source)
        }

        /// Not entitled: the line ended (`expired`, `refunded`) at `end`.
        static func ended(_ status: String = "expired", end: Date?, product: String?, source: String?) -> Expected {
            Expected(tier: 0, status: status, end: end, grace: nil, product: product, source: source)
        }

        var description: String {
            "\(tier)/\(status)/end \(end.map(ISO8601.string) ?? "nil")/grace \(grace.map(ISO8601.string) ?? "nil")/\(product ?? "nil")/\(source ?? "nil")"
        }

        /// The columns of `row` that differ from what is expected.
        func mismatches(_ row: UserRow) -> [String] {
            var wrong: [String] = []
            if row.currentTier != tier { wrong.append("tier \(row.currentTier)") }
            if row.statusText != status { wrong.append("status \(row.statusText)") }
            if row.endDate != end { wrong.append("end \(row.endDate.map(ISO8601.string) ?? "nil")") }
            if row.graceEndsAt != grace { wrong.append("grace \(row.graceEndsAt.map(ISO8601.string) ?? "nil")") }
            if row.productID != product { wrong.append("product \(row.productID ?? "nil")") }
            if row.source != source { wrong.append("source \(row.source ?? "nil")") }
            return wrong
        }

        /// CONTRACT "Applying": `billing_issue` on entering a billing issue, `expired`/`refunded` on losing the tier, `restored`
        /// on getting one back from tier 0; nothing else (an extension, a cancellation, a paused line queue nothing).
        func intents(from before: UserRow) -> Set<String> {
            var kinds = Set<String>()
            if status == "billing_issue" && before.statusText != "billing_issue" { kinds.insert("billing_issue") }
            if before.currentTier > 0 && tier == 0 && (status == "expired" || status == "refunded") { kinds.insert(status) }
            if before.currentTier == 0 && tier > 0 { kinds.insert("restored") }
            return kinds
        }
    }

    /// The invariants for one generated user after the night (and its resume or acceptance).
    static func check(
        _ id: String, _ generated: Generated, webhook version: Int64?, report rows: [String: ReportRow], harness h: Harness,
        replay: String
    ) async throws {
        let final = try #require(try await h.user(id), Comment(rawValue: replay))
        let audits = try await h.auditRows(id)
        #expect(audits <= 1, "\(id): one audit row per change — \(replay)")
        let intentsByKind = try await Self.intentKinds(id, client: h.client)
        #expect(intentsByKind.values.allSatisfy { $0 <= 1 }, "\(id): at most one intent of a kind — \(replay)")

        let refunds = try await h.count("select count(*)::int from refunds_seen where user_id = \(id)")
        if let key = generated.refund, version == nil {
            #expect(
                try await h.count("select count(*)::int from refunds_seen where user_id = \(id) and transaction_id = \(key)") == 1,
                "\(id): its refund is kept once (\(refunds) kept) — \(replay)")
        } else {
            #expect(refunds <= (generated.refund == nil ? 0 : 1), "\(id): \(refunds) refunds kept — \(replay)")
        }
        if let version {
            // Webhook writes win: the job never overwrites a version it did not read.
            let jobSawIt = try await Self.auditBefore(id, client: h.client).contains(version)
            #expect(final.updatedAtMicros == version || jobSawIt, "\(id): a webhook write was overwritten unseen — \(replay)")
            return
        }
        if let drift = generated.drift {
            #expect(
                rows[id]?.drift.contains(drift) == true,
                "\(id) \(generated.truth): drift \(rows[id]?.drift ?? []), not \(drift) — \(replay)")
        }
        switch generated.truth {
        case .known(let expected):
            let wrong = expected.mismatches(final)
            #expect(wrong.isEmpty, "\(id) expected \(expected), got \(wrong) (\(rows[id]?.drift ?? [])) — \(replay)")
            let intents = expected.intents(from: generated.row)
            #expect(
                Set(intentsByKind.keys) == intents,
                "\(id) \(expected): intents \(intentsByKind.keys.sorted()), not \(intents.sorted()) — \(replay)")
            #expect(audits == (final == generated.row ? 0 : 1), "\(id): \(audits) audit rows — \(replay)")
        case .unusable:
            #expect(final == generated.row, "\(id) \(generated.truth): the row changed — \(replay)")
            #expect(audits == 0 && intentsByKind.isEmpty, "\(id) \(generated.truth) — \(replay)")
            if !generated.unread {
                #expect(rows[id]?.action == "skipped", "\(id) \(generated.truth): \(rows[id]?.action ?? "-") — \(replay)")
            }
        }
    }

    /// All four sources on one loopback server: RevenueCat and the App Store Server API (the harness's), Stripe and
    /// Google Play; the catalog holds the harness's products and Stripe's.
    /// - Parameter revenueCatV2: RevenueCat API v2 configured beside v1 (asked first about users it may not know).
    static func withAllStores(
        revenueCatV2: Bool = false, _ body: (Harness, StripeSimulator, GooglePlaySimulator) async throws -> Void
    ) async throws {
        let stripe = StripeSimulator(apiKey: StripeWorld.key)
        let account = try GoogleTestServiceAccount.generate(tokenURI: "{base}/token")
        let google = GooglePlaySimulator(account: account, packageName: GoogleWorld.package)
        var variables = ["STRIPE_API_KEY": StripeWorld.key, "STRIPE_BASE_URL": "{base}"]
        variables.merge(GoogleWorld.environment(account)) { $1 }
        if revenueCatV2 { variables.merge(RevenueCatV2JobTests.v2Env) { $1 } }
        try await Harness.with(apple: true, revenueCat: true, routes: [stripe, google], extra: variables) { h in
            if revenueCatV2 { await h.revenueCat.setV2(apiKey: RevenueCatV2JobTests.v2Key, projectID: RevenueCatV2JobTests.project) }
            try await h.db.catalog.upsertProducts(StripeWorld.products)
            try await body(h, stripe, google)
        }
    }

    /// A candidate row of `tier`: a paid tier past its end, or lapsed within the lookback, or in billing issue.
    static func candidate(_ row: (Int, String, Double, Double?) -> UserRow, tier: Int, rng: inout SeededRandom) -> UserRow {
        switch rng.int(0...2) {
        case 0: row(tier, "active", -Double(rng.int(1...20)), nil)
        case 1: row(0, "expired", -Double(rng.int(1...40)), nil)
        default: row(tier, "billing_issue", -Double(rng.int(1...5)), Double(rng.int(-3...3)))
        }
    }
    /// Rows a webhook bug (or an app's view) left unreadable: `n-poison-0` (tier 1 past its end, status NULL),
    /// `n-poison-1` (tier NULL, in billing issue), timestamps no instant can carry (`infinity` in `updated_at`,
    /// `-infinity` in the end and, every night, in the grace end). RevenueCat entitles each, so a job that read them as
    /// anything would change them. Returns their ids.
    static func poisonRows(count: Int, harness h: Harness) async throws -> [String] {
        try await h.client.query(
            "alter table users alter column subscription_status drop not null, alter column current_tier drop not null")
        // Every night holds one timestamp no instant can carry (`-infinity` in the grace end: n-poison-4), then
        // `count` more of the others.
        let rows =
            [
                "('n-poison-0', 1, null, '2026-05-29T03:00:00Z', null, 'apple_iap', 'premium_monthly', '2026-05-01T00:00:00Z')",
                "('n-poison-1', null, 'billing_issue', '2026-05-29T03:00:00Z', null, 'apple_iap', 'premium_monthly', '2026-05-01T00:00:00Z')",
                // A timestamp no instant can carry: one user's row_error, never the night's.
                "('n-poison-2', 1, 'active', '2026-05-29T03:00:00Z', null, 'apple_iap', 'premium_monthly', 'infinity')",
                "('n-poison-3', 1, 'active', '-infinity', null, 'apple_iap', 'premium_monthly', '2026-05-01T00:00:00Z')",
            ].prefix(count) + [
                "('n-poison-4', 1, 'billing_issue', '2026-05-29T03:00:00Z', '-infinity', 'apple_iap', 'premium_monthly', '2026-05-01T00:00:00Z')"
            ]
        try await h.client.query(
            PostgresQuery(
                unsafeSQL: """
                    insert into users (id, current_tier, subscription_status, subscription_end_date, grace_period_ends_at, \
                    subscription_source, iap_product_id, updated_at) values \(rows.joined(separator: ", "))
                    """))
        let ids = (0..<count).map { "n-poison-\($0)" } + ["n-poison-4"]
        for id in ids {
            await h.revenueCat.setSubscriber(
                SimulatedSubscriber(
                    firstSeen: Harness.day(-300), subscriptions: [Harness.subscription("premium_monthly", purchased: -2, expires: 20)]),
                for: id)
        }
        return ids
    }

    /// The poisoned rows exactly as inserted.
    static func poisonedUntouched(_ ids: [String], harness h: Harness) async throws -> Bool {
        let same = try await h.count(
            """
            select count(*)::int from users where \
            (updated_at = '2026-05-01T00:00:00Z' and \
            ((id = 'n-poison-0' and current_tier = 1 and subscription_status is null) or \
            (id = 'n-poison-1' and current_tier is null and subscription_status = 'billing_issue') or \
            (id = 'n-poison-3' and current_tier = 1 and subscription_end_date = '-infinity') or \
            (id = 'n-poison-4' and current_tier = 1 and grace_period_ends_at = '-infinity'))) or \
            (id = 'n-poison-2' and updated_at = 'infinity' and current_tier = 1 and subscription_status = 'active')
            """)
        return same == ids.count
    }

    /// Rewrites each racing user's row once after its delay, as a webhook handler would; returns the versions written.
    static func webhookWrites(_ delays: [(String, Int)], client: PostgresClient) async throws -> [String: Int64] {
        try await withThrowingTaskGroup(of: (String, Int64).self) { group in
            for (id, delay) in delays {
                group.addTask {
                    try await Task.sleep(for: .milliseconds(delay))
                    let rows = try await client.query(
                        """
                        update users set current_tier = 1, subscription_status = 'active',
                          subscription_end_date = now() + interval '30 days', updated_at = clock_timestamp()
                        where id = \(id)
                        returning (extract(epoch from updated_at) * 1000000)::bigint
                        """)
                    for try await version in rows.decode(Int64.self) { return (id, version) }
                    return (id, 0)
                }
            }
            var versions: [String: Int64] = [:]
            for try await (id, version) in group { versions[id] = version }
            return versions
        }
    }

    static func onlyRunID(_ h: Harness) async throws -> String {
        var ids: [String] = []
        for try await id in try await h.client.query("select id from reconcile_runs").decode(String.self) { ids.append(id) }
        #expect(ids.count == 1)
        return try #require(ids.first)
    }

    /// The run's drift report, keyed by user id.
    static func report(_ h: Harness, runID: String) throws -> [String: ReportRow] {
        let data = try Data(contentsOf: h.reportDirectory.appendingPathComponent(runID).appendingPathComponent("drift.json"))
        let rows = try JSONDecoder().decode([ReportRow].self, from: data)
        return Dictionary(uniqueKeysWithValues: rows.map { ($0.userID, $0) })
    }

    static func intentKinds(_ id: String, client: PostgresClient) async throws -> [String: Int] {
        var kinds: [String: Int] = [:]
        let rows = try await client.query("select kind from push_intents where user_id = \(id)")
        for try await kind in rows.decode(String.self) { kinds[kind, default: 0] += 1 }
        return kinds
    }

    /// The `updated_at` versions the job read (and replaced) for this user, from its audit rows.
    static func auditBefore(_ id: String, client: PostgresClient) async throws -> Set<Int64> {
        var versions = Set<Int64>()
        let rows = try await client.query(
            "select (before->>'updated_at_micros')::bigint from reconcile_changes where user_id = \(id)")
        for try await version in rows.decode(Int64.self) { versions.insert(version) }
        return versions
    }
}
