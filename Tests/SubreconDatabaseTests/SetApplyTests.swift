import Foundation
import PostgresNIO
import SubreconCore
import SubreconDatabase
import SubreconPorts
import SubreconTestSupport
import Testing

@Suite("Set-based apply (real PostgreSQL)", .serialized, .enabled(if: TestDatabase.isEnabled, TestDatabase.skipMessage))
struct SetApplyTests {
    @Test("one batch keeps row-by-row outcomes: a repeated user loses its second CAS, a vanished row is not found")
    func repeatedAndVanished() async throws {
        try await TestDatabase.withDatabase { db, client in
            var gone = ApplyTests.lapsed
            gone.id = "gone"
            try await db.insertUsers([ApplyTests.lapsed, gone])
            let lapsed = try #require(try await db.user(id: "lapsed"))
            let vanished = try #require(try await db.user(id: "gone"))
            try await client.query("delete from users where id = 'gone'")

            let verdict = ApplyTests.expiredVerdict(lapsed)
            let results = try await db.verdicts.applyDetailed(
                [verdict, ApplyTests.expiredVerdict(vanished), verdict], runID: "run-s")
            #expect(results.map(\.outcome) == [.applied(intentsQueued: 1, intentsDeduplicated: 0), .notFound, .concurrentUpdate])
            #expect(results[0].queuedIntents == verdict.intents)
            #expect(results[2].queuedIntents.isEmpty && results[2].deduplicatedIntents.isEmpty)
            #expect(try await ApplyTests.count(client, "reconcile_changes") == 1)
            #expect(try await ApplyTests.count(client, "push_intents") == 1)
        }
    }

    @Test("dates with microseconds and nulls are written exactly")
    func exactDates() async throws {
        try await TestDatabase.withDatabase { db, client in
            var second = ApplyTests.lapsed
            second.id = "second"
            try await db.insertUsers([ApplyTests.lapsed, second])
            let first = try #require(try await db.user(id: "lapsed"))
            let other = try #require(try await db.user(id: "second"))
            let end = Date(timeIntervalSince1970: 1_790_000_000.123457)
            let grace = Date(timeIntervalSince1970: 1_790_086_400.000001)
            let graced = Entitlement(
                tier: 1, status: .billingIssue, endDate: end, graceEndsAt: grace, source: "apple_iap",
                productID: "premium.monthly", originalTransactionID: "2000", autoRenew: nil)
            let cleared = Entitlement(
                tier: 0, status: .none, endDate: nil, graceEndsAt: nil, source: nil, productID: nil,
                originalTransactionID: nil, autoRenew: false)
            let outcomes = try await db.verdicts.applyBatch(
                [
                    Verdict(row: first, truth: graced, action: .upgrade, drift: [.missedRenewal, .productChange]),
                    Verdict(row: other, truth: cleared, action: .downgrade, drift: []),
                ], runID: "run-d")
            #expect(outcomes == [.applied(intentsQueued: 0, intentsDeduplicated: 0), .applied(intentsQueued: 0, intentsDeduplicated: 0)])
            #expect(try await db.user(id: "lapsed")?.entitlement == graced)
            #expect(try await db.user(id: "second")?.entitlement == cleared)
            let drift = try await TestDatabase.scalar(
                client, "select string_agg(array_to_string(drift, ';'), '|' order by id) from reconcile_changes", as: String.self)
            #expect(drift == "missed_renewal;product_change|")
        }
    }
}
