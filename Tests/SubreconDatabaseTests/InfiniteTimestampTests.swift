import Foundation
import PostgresNIO
import SubreconCore
import SubreconDatabase
import SubreconPorts
import SubreconTestSupport
import Testing

/// Timestamps no instant can carry, at the database edge (docs/CONTRACT.md, Database): `-infinity` anywhere and
/// `infinity` in `updated_at` make the row unreadable (`rowError`, that user's `row_error`); `infinity` in an end date
/// is "no end" and reads as NULL; the apply keeps what the truth does not change and never fails on such a row.
@Suite(
    "Infinite timestamps at the database edge (real PostgreSQL)", .serialized,
    .enabled(if: TestDatabase.isEnabled, TestDatabase.skipMessage))
struct InfiniteTimestampTests {
    /// id, the values of (subscription_end_date, grace_period_ends_at, updated_at), and the row error expected.
    static let rows: [(id: String, end: String, grace: String, updated: String, error: String?)] = [
        ("i-end-plus", "infinity", "null", "now()", nil),
        ("i-grace-plus", "now()", "infinity", "now()", nil),
        ("i-end-minus", "-infinity", "null", "now()", "users.subscription_end_date is -infinity"),
        ("i-grace-minus", "now()", "-infinity", "now()", "users.grace_period_ends_at is -infinity"),
        ("i-updated-minus", "now()", "null", "-infinity", "users.updated_at is -infinity"),
        ("i-updated-plus", "now()", "null", "infinity", "users.updated_at is infinity"),
        ("i-zz-all", "-infinity", "-infinity", "infinity", "users.subscription_end_date is -infinity"),
    ]

    @Test("every read: infinite end dates read as NULL, -infinity or an infinite updated_at is the row's error, never a failed page")
    func rowsRead() async throws {
        try await TestDatabase.withDatabase { db, client in
            for row in Self.rows {
                let value = { (text: String) in text.hasSuffix("infinity") ? "'\(text)'" : text }
                try await client.query(
                    PostgresQuery(
                        unsafeSQL: """
                            insert into users (id, current_tier, subscription_status, subscription_end_date, grace_period_ends_at, \
                            updated_at) values ('\(row.id)', 1, 'billing_issue', \(value(row.end)), \(value(row.grace)), \
                            \(value(row.updated)))
                            """))
            }
            let page = try await db.candidates.candidatePage(CandidateQuery(asOf: Date()), after: nil, limit: 100)
            let sorted = Self.rows.sorted { $0.id < $1.id }
            #expect(page.map(\.id) == sorted.map(\.id))
            for (read, expected) in zip(page, sorted) {
                let single = try #require(try await db.user(id: expected.id))
                for row in [read, single] {
                    if let error = expected.error {
                        #expect(row.rowError?.contains(error) == true, "\(row.id): \(row.rowError ?? "nil")")
                        #expect(row.rowError?.contains("NULL") == false, "\(row.id): \(row.rowError ?? "")")
                    } else {
                        #expect(row.rowError == nil, "\(row.id): \(row.rowError ?? "")")
                    }
                    if expected.end.hasSuffix("infinity") { #expect(row.endDate == nil, "\(row.id)") }
                    if expected.grace.hasSuffix("infinity") { #expect(row.graceEndsAt == nil, "\(row.id)") }
                }
            }
            let all = try #require(page.last)
            #expect(all.rowError?.contains("users.grace_period_ends_at is -infinity") == true)
            #expect(all.rowError?.contains("users.updated_at is infinity") == true)
        }
    }

    @Test("a row whose updated_at turned infinite after it was read loses its compare-and-set; the batch still applies the others")
    func compareAndSetSurvives() async throws {
        try await TestDatabase.withDatabase { db, client in
            var other = ApplyTests.lapsed
            other.id = "lapsed-2"
            try await db.insertUsers([ApplyTests.lapsed, other])
            let read = try #require(try await db.user(id: "lapsed"))
            let readOther = try #require(try await db.user(id: "lapsed-2"))
            try await client.query("update users set updated_at = 'infinity' where id = 'lapsed'")
            let outcomes = try await db.verdicts.applyBatch(
                [ApplyTests.expiredVerdict(read), ApplyTests.expiredVerdict(readOther)], runID: "run-i")
            #expect(outcomes == [.concurrentUpdate, .applied(intentsQueued: 1, intentsDeduplicated: 0)])
            #expect(try await db.user(id: "lapsed-2")?.currentTier == 0)
            #expect(try await TestDatabase.scalar(client, "select current_tier from users where id = 'lapsed'", as: Int.self) == 1)
        }
    }

    @Test("an app writing 'no end' as infinity (a not null column): a change keeps what the truth leaves unchanged")
    func changeKeepsTheAppsNoEnd() async throws {
        try await TestDatabase.withDatabase(migrated: false) { unchecked, client in
            try await client.query(
                """
                create table users (id text primary key, current_tier integer not null default 0, \
                subscription_status text not null default 'none', subscription_end_date timestamptz, \
                grace_period_ends_at timestamptz not null default 'infinity', subscription_source text, iap_product_id text, \
                iap_original_transaction_id text, auto_renew boolean, \
                updated_at timestamptz not null default now())
                """)
            try await unchecked.migrate()
            let db = unchecked.with(users: try await unchecked.checkUsers(requiring: []))
            try await client.query(
                """
                insert into users (id, current_tier, subscription_status, subscription_end_date, subscription_source, \
                iap_product_id, auto_renew) values ('lapsed', 1, 'active', \(Fixture.day(-1)), 'apple_iap', 'premium.monthly', true)
                """)
            let read = try #require(try await db.user(id: "lapsed"))
            #expect(read.graceEndsAt == nil && read.originalTransactionID == nil && read.rowError == nil)
            let facts = SourceFacts(
                revenueCatKnowsSubscriber: true,
                revenueCatPurchases: [
                    PurchaseFact(
                        productID: "premium.monthly", store: .appStore, isSandbox: false, purchaseDate: Fixture.day(-31),
                        expiresDate: Fixture.day(-1), autoRenew: false, line: nil, buyer: .unstated)
                ])
            let catalog = ProductCatalog([.init(productID: "premium.monthly", tier: 1)])
            let verdict = Decision.decide(row: read, facts: facts, context: DecisionContext(asOf: Fixture.asOf, catalog: catalog))
            #expect(verdict.action == .downgrade && verdict.truth?.graceEndsAt == nil && verdict.truth?.originalTransactionID == nil)
            #expect(try await db.verdicts.apply(verdict, runID: "run-k") == .applied(intentsQueued: 1, intentsDeduplicated: 0))
            let kept = try await TestDatabase.scalar(
                client,
                """
                select count(*)::int from users where id = 'lapsed' and current_tier = 0 and subscription_status = 'expired' \
                and grace_period_ends_at = 'infinity' and iap_original_transaction_id is null
                """, as: Int.self)
            #expect(kept == 1, "the app's 'no end' is kept where the truth does not change it")
        }
    }
}
