import Foundation
import PostgresNIO
import SubreconCore
import SubreconDatabase
import SubreconPorts
import SubreconTestKit
import SubreconTestSupport
import Testing

@Suite("Candidate scan (real PostgreSQL)", .serialized, .enabled(if: TestDatabase.isEnabled, TestDatabase.skipMessage))
struct CandidateScanTests {
    /// CONTRACT "Which users a run asks about" at T = 2025-06-01, lookback 60 days: (row, nightly candidate?, backfill candidate?).
    static let table: [(UserRow, Bool, Bool)] = [
        (UserRow(id: "a_paid_past_end", currentTier: 1, status: "active", endDate: Fixture.day(-1)), true, true),
        (UserRow(id: "b_paid_future_end", currentTier: 1, status: "active", endDate: Fixture.day(10)), false, true),
        (UserRow(id: "c_paid_end_exactly_T", currentTier: 2, status: "active", endDate: Fixture.day(0)), false, true),
        (UserRow(id: "d_in_grace", currentTier: 1, status: "active", endDate: Fixture.day(-2), graceEndsAt: Fixture.day(3)), false, true),
        (UserRow(id: "e_grace_over", currentTier: 1, status: "active", endDate: Fixture.day(-5), graceEndsAt: Fixture.day(-1)), true, true),
        (
            UserRow(id: "f_billing_issue", currentTier: 1, status: "billing_issue", endDate: Fixture.day(5), graceEndsAt: Fixture.day(9)),
            true, true
        ),
        (UserRow(id: "g_expired_recent", currentTier: 0, status: "expired", endDate: Fixture.day(-30)), true, true),
        (UserRow(id: "h_expired_old", currentTier: 0, status: "expired", endDate: Fixture.day(-90)), false, true),
        (UserRow(id: "i_canceled_recent", currentTier: 0, status: "canceled", endDate: Fixture.day(-10)), true, true),
        (UserRow(id: "j_refunded_at_lookback_edge", currentTier: 0, status: "refunded", endDate: Fixture.day(-60)), true, true),
        (UserRow(id: "k_free", currentTier: 0, status: "none"), false, false),
        (UserRow(id: "l_free_with_old_end", currentTier: 0, status: "none", endDate: Fixture.day(-1)), false, true),
        (UserRow(id: "m_paid_lifetime", currentTier: 1, status: "active"), false, true),
        (UserRow(id: "n_paused_past_end", currentTier: 0, status: "paused", endDate: Fixture.day(-3)), false, true),
    ]

    static func ids(_ db: SubscriptionDatabase, _ query: CandidateQuery, pageSize: Int = 100) async throws -> [String] {
        var ids: [String] = []
        for try await row in db.candidates.scan(query, pageSize: pageSize) { ids.append(row.id) }
        return ids
    }

    @Test("each CONTRACT 'Which users a run asks about' rule selects its users and leaves the others out, in id order")
    func rules() async throws {
        try await TestDatabase.withDatabase { db, _ in
            try await db.insertUsers(Self.table.map(\.0))
            let nightly = try await Self.ids(db, CandidateQuery(mode: .nightly, asOf: Fixture.asOf, lookbackDays: 60))
            let backfill = try await Self.ids(db, CandidateQuery(mode: .backfill, asOf: Fixture.asOf))
            for (row, inNightly, inBackfill) in Self.table {
                #expect(nightly.contains(row.id) == inNightly, "nightly: \(row.id)")
                #expect(backfill.contains(row.id) == inBackfill, "backfill: \(row.id)")
            }
            #expect(nightly == nightly.sorted())
            let nightlyCount = try await db.candidates.countCandidates(CandidateQuery(mode: .nightly, asOf: Fixture.asOf))
            #expect(nightlyCount == Self.table.filter(\.1).count)
            #expect(try await db.candidates.countCandidates(CandidateQuery(mode: .backfill, asOf: Fixture.asOf)) == backfill.count)
            #expect(backfill == backfill.sorted())
        }
    }

    @Test("rows read back exactly, updated_at to the microsecond")
    func exactRead() async throws {
        try await TestDatabase.withDatabase { db, client in
            let end = Date(timeIntervalSince1970: 1_748_736_000.123456)
            let row = UserRow(
                id: "x", currentTier: 2, status: "billing_issue", endDate: end, graceEndsAt: Fixture.day(3),
                source: "apple_iap", productID: "pro.monthly", originalTransactionID: "1000", autoRenew: true,
                updatedAtMicros: 1_748_736_000_123_457)
            try await db.insertUsers([row])
            let read = try #require(try await db.user(id: "x"))
            #expect(read == row)
            let text = try await TestDatabase.scalar(client, "select updated_at::text from users where id = 'x'", as: String.self)
            #expect(text == "2025-06-01 00:00:00.123457+00")
        }
    }

    @Test("keyset pages of 2 over 7 rows return each row once, also with inserts behind and ahead of the cursor")
    func keysetPaging() async throws {
        try await TestDatabase.withDatabase { db, client in
            let ids = ["u10", "u20", "u30", "u40", "u50", "u60", "u70"]
            try await db.insertUsers(ids.map { UserRow(id: $0, currentTier: 1, status: "billing_issue") })
            let query = CandidateQuery(asOf: Fixture.asOf)

            let plain = try await Self.ids(db, query, pageSize: 2)
            #expect(plain == ids)

            var seen: [String] = []
            var iterator = db.candidates.scan(query, pageSize: 2).makeAsyncIterator()
            while let row = try await iterator.next() {
                seen.append(row.id)
                if row.id == "u30" {
                    // Mid-scan: the page [u30, u40] is loaded; write behind and ahead of the cursor.
                    try await db.insertUsers([
                        UserRow(id: "u05", currentTier: 1, status: "billing_issue"),
                        UserRow(id: "u55", currentTier: 1, status: "billing_issue"),
                    ])
                    try await client.query("update users set updated_at = now() + interval '1 hour' where id in ('u20', 'u60')")
                }
            }
            #expect(seen == ["u10", "u20", "u30", "u40", "u50", "u55", "u60", "u70"])
            #expect(Set(seen).count == seen.count)
        }
    }

    @Test("shards partition the candidates, and SQL computes the same hash as Swift")
    func shards() async throws {
        try await TestDatabase.withDatabase { db, client in
            let ids = (0..<40).map { "user-\($0)" } + ["üser-ß", "😀", "a b"]
            try await db.insertUsers(ids.map { UserRow(id: $0, currentTier: 1, status: "billing_issue") })
            let all = try await Self.ids(db, CandidateQuery(asOf: Fixture.asOf))
            #expect(Set(all) == Set(ids))
            var union: [String] = []
            for index in 0..<3 {
                let shard = ShardSpec(index: index, count: 3)
                let part = try await Self.ids(db, CandidateQuery(asOf: Fixture.asOf, shard: shard), pageSize: 7)
                #expect(!part.isEmpty)
                #expect(part.allSatisfy(shard.contains), "SQL and Swift agree on shard \(shard)")
                union += part
            }
            #expect(union.count == ids.count, "disjoint")
            #expect(Set(union) == Set(ids), "complete")

            let rows = try await client.query("select id, ('x' || substr(md5(id), 1, 8))::bit(32)::bigint from users")
            for try await (id, hash) in rows.decode((String, Int64).self) {
                #expect(hash >= 0)
                #expect(UInt32(hash) == ShardSpec.hash(of: id), "\(id)")
            }
        }
    }

    @Test("a users file restricts either mode to the listed ids")
    func usersFile() async throws {
        try await TestDatabase.withDatabase { db, _ in
            try await db.insertUsers(Self.table.map(\.0))
            let listed = ["a_paid_past_end", "b_paid_future_end", "k_free", "l_free_with_old_end", "nobody"]
            let nightly = try await Self.ids(db, CandidateQuery(mode: .nightly, asOf: Fixture.asOf, userIDs: listed))
            #expect(nightly == ["a_paid_past_end"])
            let backfill = try await Self.ids(db, CandidateQuery(mode: .backfill, asOf: Fixture.asOf, userIDs: listed))
            #expect(backfill == ["a_paid_past_end", "b_paid_future_end", "l_free_with_old_end"])
            let window = try await Self.ids(
                db,
                CandidateQuery(mode: .backfill, asOf: Fixture.asOf, endAfter: Fixture.day(-10), endBefore: Fixture.day(0)))
            #expect(
                window == [
                    "a_paid_past_end", "d_in_grace", "e_grace_over", "i_canceled_recent", "l_free_with_old_end", "n_paused_past_end",
                ])
        }
    }

    @Test("EXPLAIN of the nightly scan (logged, not asserted)")
    func explain() async throws {
        try await TestDatabase.withDatabase { db, client in
            var users: [UserRow] = []
            for i in 0..<3000 {
                let paid = i % 50 == 0
                let status = i % 97 == 0 ? "billing_issue" : "none"
                let end: Date? = paid ? Fixture.day(Double(i % 7) - 3) : nil
                users.append(UserRow(id: String(format: "p%05d", i), currentTier: paid ? 1 : 0, status: status, endDate: end))
            }
            try await db.insertUsers(users)
            try await client.query("analyze users")
            let plan = try await db.candidates.explainCandidateScan(CandidateQuery(asOf: Fixture.asOf), pageSize: 500)
            print("nightly candidate scan plan:\n\(plan)")
            #expect(plan.contains("users"))
        }
    }

    @Test("the sweep recorded once per run selects exactly the users the inline test does, per shard, over small pages")
    func sweepRecordedEqualsInline() async throws {
        try await TestDatabase.withDatabase { db, _ in
            var rows: [UserRow] = []
            for n in 0..<300 {
                // Tier holders with far end dates (no CONTRACT "Which users a run asks about" rule), free users, and a few rule candidates.
                let tier = n % 3 == 0 ? 0 : 1
                rows.append(
                    UserRow(
                        id: String(format: "s%04d", n), currentTier: tier, status: tier == 0 ? "none" : "active",
                        endDate: n % 25 == 0 ? Fixture.day(-1) : Fixture.day(200)))
            }
            try await db.insertUsers(rows)
            for shard in [ShardSpec.all, ShardSpec(index: 1, count: 3)] {
                for night in 0..<4 {
                    let asOf = Fixture.asOf.addingTimeInterval(Double(night) * 86_400)
                    let inline = CandidateQuery(asOf: asOf, shard: shard, sweepDays: 4)
                    let runID = "sweep-\(shard.index)-\(night)"
                    try await db.feeds.recordSweep(inline, runID: runID)
                    try await db.feeds.recordSweep(inline, runID: runID)  // idempotent
                    let recorded = CandidateQuery(asOf: asOf, shard: shard, sweepDays: 4, runCandidatesID: runID)
                    let a = try await Self.ids(db, inline, pageSize: 7)
                    let b = try await Self.ids(db, recorded, pageSize: 7)
                    #expect(a == b, "night \(night), shard \(shard)")
                    #expect(try await db.candidates.countCandidates(recorded) == b.count)
                    let swept = b.filter { id in
                        rows.first { $0.id == id }!.endDate == Fixture.day(200)
                    }
                    #expect(
                        !swept.isEmpty
                            && swept.allSatisfy {
                                CandidateQuery.sweepBucket(of: $0, days: 4) == CandidateQuery.sweepNight(asOf: asOf, days: 4)
                            })
                }
            }
        }
    }

    /// Each row's reasons as the scan states them, by id.
    static func reasons(_ db: SubscriptionDatabase, _ query: CandidateQuery, pageSize: Int) async throws -> [String: [CandidateReason]] {
        var reasons: [String: [CandidateReason]] = [:]
        for try await row in db.candidates.scan(query, pageSize: pageSize) { reasons[row.id] = row.candidateReasons }
        return reasons
    }

    @Test(
        "the scan states each row's reasons as the rules' model gives them: rules, sweeps inline or recorded, named users, backfill, users file"
    )
    func statedReasons() async throws {
        try await TestDatabase.withDatabase { db, _ in
            var rows = Self.table.map(\.0)
            for n in 0..<120 {
                let tier = n % 3 == 0 ? 0 : 1
                let status = ["active", "expired", "billing_issue", "none", "canceled"][n % 5]
                rows.append(
                    UserRow(
                        id: String(format: "r%04d", n), currentTier: tier, status: tier == 0 && status == "active" ? "none" : status,
                        endDate: n % 4 == 0 ? nil : Fixture.day(Double(n % 7 == 0 ? -20 : 40)),
                        graceEndsAt: n % 11 == 0 ? Fixture.day(2) : nil))
            }
            try await db.insertUsers(rows)
            let named: [String: [CandidateReason]] = [
                "r0003": [.feed("stripe_event")], "k_free": [.feed("google_voided"), .linkedPurchase],
                "h_expired_old": [.feed("apple_notification")],
            ]
            let inline = CandidateQuery(asOf: Fixture.asOf, sweepDays: 3, namedUsers: named, sweepFreeDays: 4)
            func expected(_ query: CandidateQuery, recorded: [String: [CandidateReason]] = [:]) -> [String: [CandidateReason]] {
                var all: [String: [CandidateReason]] = [:]
                for row in rows {
                    var reasons = CandidateRulesModel.rules(row: row, asOf: query.asOf, lookbackDays: query.lookbackDays)
                    reasons += query.namedUsers?[row.id] ?? []
                    reasons += query.runCandidatesID == nil ? CandidateRulesModel.sweeps(query, row) : recorded[row.id] ?? []
                    if !reasons.isEmpty { all[row.id] = query.reasons(met: reasons) }
                }
                return all
            }
            for pageSize in [1, 7, 500] {
                #expect(try await Self.reasons(db, inline, pageSize: pageSize) == expected(inline), "inline, page \(pageSize)")
            }
            // The sweeps recorded for a run, plus a feed's user, read back with their rows.
            let recordedQuery = CandidateQuery(asOf: Fixture.asOf, sweepDays: 3, runCandidatesID: "run-r", sweepFreeDays: 4)
            try await db.feeds.recordSweep(recordedQuery, runID: "run-r")
            var recorded: [String: [CandidateReason]] = [:]
            for row in rows {
                for reason in CandidateRulesModel.sweeps(recordedQuery, row) { recorded[row.id, default: []].append(reason) }
            }
            #expect(!recorded.isEmpty)
            #expect(try await Self.reasons(db, recordedQuery, pageSize: 5) == expected(recordedQuery, recorded: recorded))
            // Backfill states `backfill`; a users file adds `users_file` to whatever else the row met.
            let backfill = CandidateQuery(
                mode: .backfill, asOf: Fixture.asOf, userIDs: ["a_paid_past_end", "k_free", "l_free_with_old_end"])
            #expect(
                try await Self.reasons(db, backfill, pageSize: 2)
                    == ["a_paid_past_end": [.usersFile, .backfill], "l_free_with_old_end": [.usersFile, .backfill]])
            let listed = CandidateQuery(asOf: Fixture.asOf, userIDs: ["a_paid_past_end", "f_billing_issue"])
            #expect(
                try await Self.reasons(db, listed, pageSize: 500)
                    == ["a_paid_past_end": [.expired, .usersFile], "f_billing_issue": [.billingIssue, .usersFile]])
        }
    }
}
