import Foundation
import PostgresNIO
import SubreconCore
import SubreconDatabase
import SubreconPorts
import SubreconTestKit
import SubreconTestSupport
import Testing

/// CONTRACT "Database" `account_token`, 5.10 links and orphans: the database side.
@Suite(
    "Whose purchase it is: account_token, links, orphans (real PostgreSQL)", .serialized,
    .enabled(if: TestDatabase.isEnabled, TestDatabase.skipMessage))
struct PurchaseLinksTests {
    static func user(_ id: String, tier: Int = 0, account: String? = nil, identifiers: [FactOrigin: String] = [:]) -> UserRow {
        var row = UserRow(
            id: id, currentTier: tier, status: tier > 0 ? "active" : "none", endDate: tier > 0 ? Fixture.day(20) : nil,
            identifiers: identifiers)
        row.accountToken = account
        return row
    }

    @Test("account_token is read into the row when the column exists; empty and NULL read as nil")
    func accountTokenRead() async throws {
        try await TestDatabase.withDatabase { unchecked, client in
            let relation = try await unchecked.checkUsers(requiring: [])
            #expect(relation.hasAccountToken && !unchecked.users.hasAccountToken)
            let db = unchecked.with(users: relation)
            try await db.insertUsers([
                Self.user("u-1", tier: 1, account: "acct-1"), Self.user("u-2", tier: 1, account: ""), Self.user("u-3", tier: 1),
            ])
            #expect(try await db.user(id: "u-1")?.accountToken == "acct-1")
            #expect(try await db.user(id: "u-2")?.accountToken == nil)
            #expect(try await db.user(id: "u-3")?.accountToken == nil)
            let page = try await db.candidates.candidatePage(
                CandidateQuery(mode: .backfill, asOf: Fixture.asOf), after: nil, limit: 10)
            #expect(page.map(\.accountToken) == ["acct-1", nil, nil])
        }
    }

    @Test("an app's users without account_token is fine (read as nil); one with a non-text account_token is refused")
    func accountTokenAbsentOrWrongType() async throws {
        try await TestDatabase.withDatabase(migrated: false) { db, client in
            try await client.query(PostgresQuery(unsafeSQL: OwnUsersTests.appTable))
            try await db.migrate()
            let relation = try await db.checkUsers(requiring: [])
            #expect(!relation.hasAccountToken)
            try await client.query("insert into users (id, email, current_tier) values ('u-1', 'a@example.com', 1)")
            let reader = db.with(users: relation)
            #expect(try await reader.user(id: "u-1")?.accountToken == nil)
            let (own, other) = (BuyerAccount("u-1", store: .stripe)!, BuyerAccount("acct", store: .stripe)!)
            #expect(try await reader.links.owners(ofAccounts: [own, other]) == [own: ["u-1"]])

            try await client.query("alter table users add column account_token integer")
            do {
                _ = try await db.checkUsers(requiring: [])
                Issue.record("a users with an integer account_token was accepted")
            } catch let violation as UsersContract.Violation {
                #expect(violation.wrongType == ["account_token of type integer (needs text)"])
                #expect(violation.missing == [])
            }
        }
    }

    @Test("owners: by id or account_token, an Apple token case-insensitively, any other account exactly (a UUID too)")
    func owners() async throws {
        try await TestDatabase.withDatabase { unchecked, _ in
            let db = unchecked.with(users: try await unchecked.checkUsers(requiring: []))
            let uuid = "5F1E2D3C-4B5A-4978-8A6B-5C4D3E2F1A0B"
            let other = uuid.lowercased().replacingOccurrences(of: "5f1e", with: "0000")
            try await db.insertUsers([
                Self.user("u-1"), Self.user("u-2", account: uuid), Self.user("u-3", account: "shared"),
                Self.user("u-4", account: "shared"), Self.user(other),
            ])
            func apple(_ text: String) -> BuyerAccount { BuyerAccount(text, store: .appStore)! }
            func stripe(_ text: String) -> BuyerAccount { BuyerAccount(text, store: .stripe)! }
            let owners = try await db.links.owners(ofAccounts: [
                stripe("u-1"), apple(uuid.lowercased()), stripe("shared"), stripe("U-1"), stripe("nobody"),
                apple("0000" + uuid.dropFirst(4)), stripe(uuid.lowercased()), stripe(other.uppercased()),
            ])
            #expect(
                owners == [
                    stripe("u-1"): ["u-1"], apple(uuid): ["u-2"], stripe("shared"): ["u-3", "u-4"],
                    apple("0000" + uuid.dropFirst(4)): [other],
                ], "a Stripe account that looks like a UUID is compared exactly: no other case matches")
            #expect(BuyerAccount("", store: .stripe) == nil && BuyerAccount(" \t", store: .appStore) == nil)
        }
    }

    @Test("heldIdentifiers says which identifiers a row holds, reading only")
    func held() async throws {
        try await TestDatabase.withDatabase { db, _ in
            try await db.insertUsers([Self.user("u-1", identifiers: [.stripe: "cus_1"]), Self.user("u-2")])
            let held = try await db.links.heldIdentifiers(
                column: FeedColumn(IdentifierColumn.testStripe), identifiers: ["cus_1", "cus_2", "cus_1", ""])
            #expect(held == ["cus_1"])
            #expect(try await db.links.heldIdentifiers(column: .appleOriginalTransactionID, identifiers: []) == [])
        }
    }

    @Test("a link makes its user a candidate once, reason linked_purchase, joined into the keyset scan; links round-trip")
    func linksAreCandidates() async throws {
        try await TestDatabase.withDatabase { db, client in
            try await db.insertUsers([Self.user("u-1", identifiers: [.stripe: "cus_1"]), Self.user("u-2"), Self.user("u-3")])
            let links = [
                PurchaseLink(userID: "u-1", origin: .googlePlay, identifier: "tok-1"),
                PurchaseLink(userID: "u-2", origin: .stripe, identifier: "cus_,\"9\"\r\n"),
                PurchaseLink(userID: "u-2", origin: .googlePlay, identifier: "tok-2"),
                PurchaseLink(userID: "u-2", origin: .stripe, identifier: "cus_other"),
            ]
            try await db.links.addLinks(runID: "run-l", links)
            try await db.links.addLinks(runID: "run-l", links)
            _ = try await db.feeds.addFeedCandidates(
                runID: "run-l", column: FeedColumn(IdentifierColumn.testStripe), identifiers: ["cus_1"], reason: .feed("stripe_event"))
            let reasons = try await TestDatabase.scalar(
                client,
                "select string_agg(user_id || ':' || array_to_string(reasons, ';'), '|' order by user_id) from reconcile_run_candidates",
                as: String.self)
            #expect(reasons == "u-1:linked_purchase;stripe_event|u-2:linked_purchase")
            let query = CandidateQuery(asOf: Fixture.asOf, runCandidatesID: "run-l")
            var scanned: [String] = []
            var stated: [String: [CandidateReason]] = [:]
            for try await row in db.candidates.scan(query, pageSize: 1) {
                scanned.append(row.id)
                stated[row.id] = row.candidateReasons
            }
            #expect(scanned == ["u-1", "u-2"])
            // The scan states each row's reasons as recorded (feeds sort before `linked_purchase`).
            #expect(stated == ["u-1": [.feed("stripe_event"), .linkedPurchase], "u-2": [.linkedPurchase]])
            #expect(
                try await db.links.links(runID: "run-l")
                    == ["u-1": [.googlePlay: "tok-1"], "u-2": [.stripe: "cus_,\"9\"\r\n", .googlePlay: "tok-2"]])
            #expect(try await db.links.links(runID: "other") == [:])
        }
    }

    @Test("orphans are kept across nights: first_seen stays, last_seen moves, tonight's facts win, text exact")
    func orphansAcrossNights() async throws {
        try await TestDatabase.withDatabase { db, client in
            let first = Fixture.day(-1)
            let second = Fixture.asOf
            let hostile = "GPA.1,\"2\"\r\n3"
            let a = Orphan(
                origin: .googlePlay, identifier: hostile, productID: "premium", status: .active, endDate: Fixture.day(10),
                accountToken: "acct,\"x\"", price: Money(amount: Decimal(string: "9.99")!, currency: "eur"))
            let b = Orphan(
                origin: .stripe, identifier: "cus_b", productID: "web", status: .active, endDate: nil, accountToken: nil,
                price: nil)
            let night1 = try await db.links.recordOrphans(runID: "run-1", night: first, [a, b, a])
            #expect(night1.map(\.identifier) == [hostile, "cus_b"])
            #expect(night1.allSatisfy { $0.firstSeen == first && $0.lastSeen == first })
            var renewed = a
            renewed.status = .billingIssue
            let night2 = try await db.links.recordOrphans(runID: "run-2", night: second, [renewed])
            #expect(night2.count == 1)
            let kept = try #require(night2.first)
            #expect(kept.firstSeen == first && kept.lastSeen == second)
            #expect(kept.status == .billingIssue && kept.accountToken == "acct,\"x\"" && kept.identifier == hostile)
            #expect(kept.price == Money(amount: Decimal(string: "9.99")!, currency: "EUR"))
            #expect(kept.endDate == Fixture.day(10))
            #expect(try await ApplyTests.count(client, "reconcile_orphans") == 2)
            let stripe = try await TestDatabase.scalar(
                client, "select last_run_id from reconcile_orphans where identifier = 'cus_b'", as: String.self)
            #expect(stripe == "run-1")
            #expect(try await db.links.recordOrphans(runID: "run-3", night: second, []) == [])
        }
    }
}
