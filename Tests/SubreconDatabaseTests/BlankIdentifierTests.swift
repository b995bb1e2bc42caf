import Foundation
import PostgresNIO
import SubreconCore
import SubreconDatabase
import SubreconPorts
import SubreconTestKit
import SubreconTestSupport
import Testing

/// An empty identifier is no identifier (docs/CONTRACT.md, Database): a `users` row holding `''` or only whitespace
/// in `iap_original_transaction_id`, a store's identifier column or `account_token` reads as holding none, matches
/// no feed entry, and is held by no one; any other value is kept exactly as stored.
@Suite(
    "Blank identifiers read as none (real PostgreSQL)", .serialized, .enabled(if: TestDatabase.isEnabled, TestDatabase.skipMessage))
struct BlankIdentifierTests {
    static let blanks = ["", " ", "\t", "  \n "]

    /// Rows `b-0`...`b-3` holding one blank value in every identifier column and in `account_token`, and `k-1`
    /// holding values with spaces around them (kept exactly).
    static func seed(_ client: PostgresClient) async throws {
        for (n, blank) in blanks.enumerated() {
            var binds = PostgresBindings()
            binds.append("b-\(n)")
            binds.append(blank)
            try await client.query(
                PostgresQuery(
                    unsafeSQL: """
                        insert into users (id, current_tier, subscription_status, subscription_end_date, \
                        iap_original_transaction_id, google_purchase_token, stripe_customer_id, account_token) \
                        values ($1, 1, 'billing_issue', now(), $2, $2, $2, $2)
                        """, binds: binds))
        }
        try await client.query(
            """
            insert into users (id, current_tier, subscription_status, iap_original_transaction_id, google_purchase_token, \
            stripe_customer_id, account_token) values ('k-1', 1, 'billing_issue', ' 1000 ', ' tok ', 'cus_1 ', ' acct')
            """)
    }

    @Test("every read of a row (the page, the one user) reads a blank identifier or account as none, others exactly")
    func rowsReadBlankAsNone() async throws {
        try await TestDatabase.withDatabase { unchecked, client in
            let db = unchecked.with(users: try await unchecked.checkUsers(requiring: []))
            try await Self.seed(client)
            let page = try await db.candidates.candidatePage(CandidateQuery(mode: .backfill, asOf: Fixture.asOf), after: nil, limit: 10)
            #expect(page.map(\.id) == ["b-0", "b-1", "b-2", "b-3", "k-1"])
            for row in page.dropLast() {
                #expect(row.originalTransactionID == nil && row.identifiers.isEmpty && row.accountToken == nil, "\(row.id): \(row)")
            }
            let kept = try #require(try await db.user(id: "k-1"))
            #expect(kept.originalTransactionID == " 1000 " && kept.accountToken == " acct")
            #expect(kept.identifiers == [.googlePlay: " tok ", .stripe: "cus_1 "])
            for n in Self.blanks.indices {
                let row = try #require(try await db.user(id: "b-\(n)"))
                #expect(row.originalTransactionID == nil && row.identifiers.isEmpty && row.accountToken == nil)
                #expect(row.entitlement.originalTransactionID == nil && row.entitlement.storeIdentifiers.isEmpty)
            }
        }
    }

    @Test("a blank is held by no one: heldIdentifiers, owners, the feeds' matches")
    func blankIsNotHeld() async throws {
        try await TestDatabase.withDatabase { unchecked, client in
            let db = unchecked.with(users: try await unchecked.checkUsers(requiring: []))
            try await Self.seed(client)
            let columns = [FeedColumn.appleOriginalTransactionID] + IdentifierColumn.testColumns.map(FeedColumn.init)
            for column in columns {
                #expect(try await db.links.heldIdentifiers(column: column, identifiers: Self.blanks) == [], "\(column)")
                let named = try await db.feeds.feedUsers(column: column, identifiers: Self.blanks)
                #expect(named.users == [] && named.unmatched == 0, "\(column): \(named)")
                #expect(try await db.feeds.feedUserIDs(column: column, identifiers: Self.blanks) == [:])
                let match = try await db.feeds.addFeedCandidates(
                    runID: "run-b", column: column, identifiers: Self.blanks, reason: .feed("stripe_event"))
                #expect(match == FeedMatch(users: 0, unmatched: 0), "\(column)")
            }
            #expect(try await db.links.heldIdentifiers(column: .appleOriginalTransactionID, identifiers: [" 1000 ", "1000"]) == [" 1000 "])
            let accounts = (Self.blanks + [" acct", "acct"]).map { BuyerAccount(stated: $0, ignoresCase: false) }
            #expect(try await db.links.owners(ofAccounts: accounts) == [BuyerAccount(stated: " acct", ignoresCase: false): ["k-1"]])
            let recorded = try await TestDatabase.scalar(
                client, "select count(*)::int from reconcile_run_candidates where run_id = 'run-b'", as: Int.self)
            #expect(recorded == 0)
        }
    }

    @Test("an app writing 'none' as '' in a not null Apple column: a change keeps it where the truth names no purchase")
    func changeKeepsTheAppsNone() async throws {
        try await TestDatabase.withDatabase(migrated: false) { unchecked, client in
            try await client.query(
                """
                create table users (id text primary key, current_tier integer not null default 0, \
                subscription_status text not null default 'none', subscription_end_date timestamptz, \
                grace_period_ends_at timestamptz, subscription_source text, iap_product_id text, \
                iap_original_transaction_id text not null default '', auto_renew boolean, \
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
            #expect(read.originalTransactionID == nil && read.rowError == nil)
            let facts = SourceFacts(
                revenueCatKnowsSubscriber: true,
                revenueCatPurchases: [
                    PurchaseFact(
                        productID: "premium.monthly", store: .appStore, isSandbox: false, purchaseDate: Fixture.day(-31),
                        expiresDate: Fixture.day(-1), autoRenew: false, line: nil, buyer: .unstated)
                ])
            let catalog = ProductCatalog([.init(productID: "premium.monthly", tier: 1)])
            let verdict = Decision.decide(row: read, facts: facts, context: DecisionContext(asOf: Fixture.asOf, catalog: catalog))
            #expect(verdict.action == .downgrade && verdict.truth?.originalTransactionID == nil)
            #expect(try await db.verdicts.apply(verdict, runID: "run-n") == .applied(intentsQueued: 1, intentsDeduplicated: 0))
            let kept = try await TestDatabase.scalar(
                client,
                """
                select count(*)::int from users where id = 'lapsed' and current_tier = 0 and iap_original_transaction_id = ''
                """, as: Int.self)
            #expect(kept == 1, "the app's 'none' is kept where the truth names no purchase")
        }
    }
}
