import Foundation
import PostgresNIO
import SubreconCore
import SubreconDatabase
import SubreconPorts
import SubreconTestSupport
import Testing

@Suite("Applying verdicts (real PostgreSQL)", .serialized, .enabled(if: TestDatabase.isEnabled, TestDatabase.skipMessage))
struct ApplyTests {
    static let lapsed = UserRow(
        id: "lapsed", currentTier: 1, status: "active", endDate: Fixture.day(-1), source: "apple_iap",
        productID: "premium.monthly", originalTransactionID: "2000", autoRenew: true)

    /// The verdict `decide` gives for a subscription that expired yesterday without renewal.
    static func expiredVerdict(_ row: UserRow) -> Verdict {
        let facts = SourceFacts(
            revenueCatKnowsSubscriber: true,
            revenueCatPurchases: [
                PurchaseFact(
                    productID: "premium.monthly", store: .appStore, isSandbox: false, purchaseDate: Fixture.day(-31),
                    expiresDate: row.endDate, autoRenew: false, originalTransactionID: "2000", line: nil, buyer: .unstated)
            ])
        let catalog = ProductCatalog([.init(productID: "premium.monthly", tier: 1)])
        return Decision.decide(row: row, facts: facts, context: DecisionContext(asOf: Fixture.asOf, catalog: catalog))
    }

    static func count(_ client: PostgresClient, _ table: String) async throws -> Int {
        try await TestDatabase.scalar(client, "select count(*)::int from \(unescaped: table)", as: Int.self) ?? -1
    }

    @Test("apply writes the row, its audit row and its intents together")
    func appliesAtomically() async throws {
        try await TestDatabase.withDatabase { db, client in
            try await db.insertUsers([Self.lapsed])
            let read = try #require(try await db.user(id: "lapsed"))
            let verdict = Self.expiredVerdict(read)
            #expect(verdict.action == .downgrade)
            #expect(verdict.intents.map(\.kind) == [.expired])

            let outcome = try await db.verdicts.apply(verdict, runID: "run-1")
            #expect(outcome == .applied(intentsQueued: 1, intentsDeduplicated: 0))

            let written = try #require(try await db.user(id: "lapsed"))
            #expect(written.currentTier == 0)
            #expect(written.statusText == "expired")
            #expect(written.autoRenew == false)
            #expect(written.endDate == read.endDate)
            #expect(written.updatedAtMicros > read.updatedAtMicros)

            let audit = try await client.query(
                """
                select run_id, user_id, action, array_to_string(drift, ';'), (before->>'current_tier')::int,
                (after->>'current_tier')::int, after->>'subscription_status' from reconcile_changes
                """)
            var audits = 0
            for try await (run, user, action, drift, before, after, status) in audit.decode(
                (String, String, String, String, Int, Int, String).self)
            {
                audits += 1
                #expect(run == "run-1")
                #expect(user == "lapsed")
                #expect(action == "downgrade")
                #expect(drift == "missed_expiration")
                #expect(before == 1)
                #expect(after == 0)
                #expect(status == "expired")
            }
            #expect(audits == 1)

            let intents = try await client.query(
                "select kind, dedupe_key, payload->>'action', payload->>'user_id', run_id from push_intents")
            var rows = 0
            for try await (kind, key, action, user, run) in intents.decode((String, String, String?, String, String).self) {
                rows += 1
                #expect(kind == "expired")
                #expect(key == verdict.intents[0].dedupeKey)
                #expect(action == "RESUBSCRIBE")
                #expect(user == "lapsed")
                #expect(run == "run-1")
            }
            #expect(rows == 1)
        }
    }

    @Test("a failure after the update rolls back the row and the audit row too")
    func rollsBackOnFailure() async throws {
        try await TestDatabase.withDatabase { db, client in
            try await db.insertUsers([Self.lapsed])
            let read = try #require(try await db.user(id: "lapsed"))
            try await client.query("alter table push_intents add constraint no_expired check (kind <> 'expired')")
            await #expect(throws: DatabaseError.self) { _ = try await db.verdicts.apply(Self.expiredVerdict(read), runID: "run-1") }
            #expect(try await db.user(id: "lapsed") == read)
            #expect(try await Self.count(client, "reconcile_changes") == 0)
            #expect(try await Self.count(client, "push_intents") == 0)
        }
    }

    @Test("the compare-and-set loses when updated_at changed after the read")
    func concurrentUpdate() async throws {
        try await TestDatabase.withDatabase { db, client in
            try await db.insertUsers([Self.lapsed])
            let read = try #require(try await db.user(id: "lapsed"))
            // A webhook renews the user between our read and our write.
            try await client.query(
                "update users set subscription_end_date = subscription_end_date + interval '30 days', updated_at = now() where id = 'lapsed'"
            )
            let webhook = try #require(try await db.user(id: "lapsed"))

            #expect(try await db.verdicts.apply(Self.expiredVerdict(read), runID: "run-1") == .concurrentUpdate)
            #expect(try await db.user(id: "lapsed") == webhook)
            #expect(try await Self.count(client, "reconcile_changes") == 0)
            #expect(try await Self.count(client, "push_intents") == 0)

            try await client.query("delete from users where id = 'lapsed'")
            #expect(try await db.verdicts.apply(Self.expiredVerdict(webhook), runID: "run-1") == .notFound)
        }
    }

    @Test("the same intent is queued once across two applies")
    func dedupe() async throws {
        try await TestDatabase.withDatabase { db, client in
            try await db.insertUsers([Self.lapsed])
            let first = try #require(try await db.user(id: "lapsed"))
            let verdict = Self.expiredVerdict(first)
            #expect(try await db.verdicts.apply(verdict, runID: "night-1") == .applied(intentsQueued: 1, intentsDeduplicated: 0))

            // The next night a webhook put the tier back wrongly; the same expiry is found again.
            try await client.query("update users set current_tier = 1, subscription_status = 'active' where id = 'lapsed'")
            let second = try #require(try await db.user(id: "lapsed"))
            let again = Self.expiredVerdict(second)
            #expect(again.intents.map(\.dedupeKey) == verdict.intents.map(\.dedupeKey))
            let detailed = try await db.verdicts.applyDetailed([again], runID: "night-2")
            #expect(detailed[0].outcome == .applied(intentsQueued: 0, intentsDeduplicated: 1))
            #expect(detailed[0].queuedIntents.isEmpty)
            #expect(detailed[0].deduplicatedIntents == again.intents)
            #expect(try await Self.count(client, "push_intents") == 1)
            #expect(try await Self.count(client, "reconcile_changes") == 2)
        }
    }

    @Test("a batch applies each row on its own: applied, lost CAS and unchanged side by side")
    func batch() async throws {
        try await TestDatabase.withDatabase { db, client in
            var other = Self.lapsed
            other.id = "stale"
            var calm = Self.lapsed
            calm.id = "calm"
            try await db.insertUsers([Self.lapsed, other, calm])
            let lapsed = try #require(try await db.user(id: "lapsed"))
            let stale = try #require(try await db.user(id: "stale"))
            let quiet = try #require(try await db.user(id: "calm"))
            try await client.query("update users set updated_at = now() + interval '1 second' where id = 'stale'")
            let unchanged = Verdict(row: quiet, truth: quiet.entitlement, action: .none, drift: [.inSync])

            let outcomes = try await db.verdicts.applyBatch(
                [Self.expiredVerdict(lapsed), Self.expiredVerdict(stale), unchanged], runID: "run-b")
            #expect(outcomes == [.applied(intentsQueued: 1, intentsDeduplicated: 0), .concurrentUpdate, .unchanged])
            #expect(try await db.user(id: "lapsed")?.currentTier == 0)
            #expect(try await db.user(id: "stale")?.currentTier == 1)
            #expect(try await db.user(id: "calm") == quiet)
            #expect(try await Self.count(client, "reconcile_changes") == 1)
            #expect(try await Self.count(client, "push_intents") == 1)
        }
    }
}
