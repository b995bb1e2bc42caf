import Foundation
import PostgresNIO
import SubreconCore
import SubreconDatabase
import SubreconPorts
import SubreconTestKit
import SubreconTestSupport
import Testing

/// Whom a feed's refunds belong to (CONTRACT "Finance figures"): the users whose row holds each identifier in the feed's column.
@Suite("Feed identifiers to user ids (real PostgreSQL)", .serialized, .enabled(if: TestDatabase.isEnabled, TestDatabase.skipMessage))
struct FeedUserIDsTests {
    @Test("each identifier maps to the users holding it, sorted; unmatched and empty identifiers are absent; nothing is written")
    func mapping() async throws {
        try await TestDatabase.withDatabase { db, client in
            try await db.insertUsers([
                UserRow(
                    id: "u-b", currentTier: 1, status: "active", originalTransactionID: "o-1",
                    identifiers: [.googlePlay: "tok-1"].compactMapValues { $0 }),
                UserRow(
                    id: "u-a", currentTier: 1, status: "active", originalTransactionID: "o-1",
                    identifiers: [.stripe: "cus_a"].compactMapValues { $0 }),
                UserRow(id: "u-c", currentTier: 0, status: "none", identifiers: [.googlePlay: "tok-2"].compactMapValues { $0 }),
            ])
            #expect(
                try await db.feeds.feedUserIDs(column: .appleOriginalTransactionID, identifiers: ["o-1", "o-1", "o-none", ""])
                    == ["o-1": ["u-a", "u-b"]])
            #expect(
                try await db.feeds.feedUserIDs(column: FeedColumn(.testGoogle), identifiers: ["tok-2", "tok-1"])
                    == ["tok-1": ["u-b"], "tok-2": ["u-c"]])
            #expect(try await db.feeds.feedUserIDs(column: FeedColumn(.testStripe), identifiers: ["cus_a"]) == ["cus_a": ["u-a"]])
            #expect(try await db.feeds.feedUserIDs(column: FeedColumn(.testStripe), identifiers: []) == [:])
            #expect(try await TestDatabase.scalar(client, "select count(*)::int from reconcile_run_candidates", as: Int.self) == 0)
        }
    }

    @Test("an app's users without the feed's column matches nothing (the Apple column is always there)")
    func missingColumn() async throws {
        try await TestDatabase.withDatabase(migrated: false) { db, client in
            try await client.query(PostgresQuery(unsafeSQL: OwnUsersTests.appTable))
            try await db.migrate()
            try await client.query(
                "insert into users (id, email, iap_original_transaction_id) values ('u-1', 'a@example.com', 'o-1')")
            let reader = db.with(users: try await db.checkUsers(requiring: []))
            #expect(try await reader.feeds.feedUserIDs(column: FeedColumn(.testGoogle), identifiers: ["tok-1"]) == [:])
            #expect(try await reader.feeds.feedUserIDs(column: FeedColumn(.testStripe), identifiers: ["cus_1"]) == [:])
            #expect(try await reader.feeds.feedUserIDs(column: .appleOriginalTransactionID, identifiers: ["o-1"]) == ["o-1": ["u-1"]])
        }
    }
}
