import Foundation
import PostgresNIO
import SubreconCore
import SubreconDatabase
import SubreconPorts
import SubreconTestSupport
import Testing

/// CONTRACT "Whose purchase it is": a linked or newer store identifier is written into its own store's column by the change itself, under
/// the same compare-and-set, and audited like the tier.
@Suite("Identifier writes under the CAS (real PostgreSQL)", .serialized, .enabled(if: TestDatabase.isEnabled, TestDatabase.skipMessage))
struct IdentifierWriteTests {
    static let row = UserRow(
        id: "u-1", currentTier: 0, status: "none", identifiers: [.stripe: "cus_old", .googlePlay: "tok-keep"])

    /// A restore whose truth writes `identifiers` over the row's.
    static func verdict(_ read: UserRow, identifiers: [FactOrigin: String]) -> Verdict {
        let truth = Entitlement(
            tier: 1, status: .active, endDate: Fixture.day(30), graceEndsAt: nil, source: "stripe", productID: "web",
            originalTransactionID: nil, autoRenew: true, storeIdentifiers: identifiers)
        return Verdict(row: read, truth: truth, action: .restore, drift: [.linkedPurchase])
    }

    @Test("the truth's identifiers are written with the rest of the change and audited before/after")
    func writtenAndAudited() async throws {
        try await TestDatabase.withDatabase { db, client in
            try await db.insertUsers([Self.row])
            let read = try #require(try await db.user(id: "u-1"))
            let outcome = try await db.verdicts.apply(
                Self.verdict(read, identifiers: [.stripe: "cus_new", .googlePlay: "tok-keep"]), runID: "run-w")
            #expect(outcome == .applied(intentsQueued: 0, intentsDeduplicated: 0))
            let written = try #require(try await db.user(id: "u-1"))
            #expect(written.identifiers == [.stripe: "cus_new", .googlePlay: "tok-keep"])
            #expect(written.currentTier == 1)
            let audit = try await TestDatabase.scalar(
                client,
                """
                select concat_ws('|', before->>'stripe_customer_id', after->>'stripe_customer_id', \
                before->>'google_purchase_token', after->>'google_purchase_token') from reconcile_changes
                """, as: String.self)
            #expect(audit == "cus_old|cus_new|tok-keep|tok-keep")
        }
    }

    @Test("a webhook that wrote first wins: the CAS is lost and its identifier stays")
    func casLost() async throws {
        try await TestDatabase.withDatabase { db, client in
            try await db.insertUsers([Self.row])
            let read = try #require(try await db.user(id: "u-1"))
            try await client.query(
                "update users set stripe_customer_id = 'cus_webhook', updated_at = updated_at + interval '1 second' where id = 'u-1'")
            let outcome = try await db.verdicts.apply(Self.verdict(read, identifiers: [.stripe: "cus_new"]), runID: "run-c")
            #expect(outcome == .concurrentUpdate)
            #expect(try await db.user(id: "u-1")?.identifiers[.stripe] == "cus_webhook")
            #expect(try await ApplyTests.count(client, "reconcile_changes") == 0)
        }
    }

    @Test("a column not in the truth's map, or holding the same value, is never in the statement; an empty map writes none")
    func untouchedColumns() async throws {
        try await TestDatabase.withDatabase { db, client in
            var other = Self.row
            other.id = "u-2"
            try await db.insertUsers([Self.row, other])
            // Any UPDATE naming google_purchase_token fails: the apply must not name it.
            try await client.query(
                """
                create function refuse_google() returns trigger language plpgsql as \
                $$ begin raise exception 'google_purchase_token was written'; end $$
                """)
            try await client.query(
                "create trigger refuse_google before update of google_purchase_token on users for each row execute function refuse_google()"
            )
            let first = try #require(try await db.user(id: "u-1"))
            let second = try #require(try await db.user(id: "u-2"))
            let outcomes = try await db.verdicts.applyBatch(
                [
                    Self.verdict(first, identifiers: [.stripe: "cus_new"]),
                    Self.verdict(second, identifiers: [.googlePlay: "tok-keep"]),
                ], runID: "run-u")
            #expect(outcomes.allSatisfy { $0 == .applied(intentsQueued: 0, intentsDeduplicated: 0) })
            #expect(try await db.user(id: "u-1")?.identifiers == [.stripe: "cus_new", .googlePlay: "tok-keep"])
            #expect(try await db.user(id: "u-2")?.identifiers == [.stripe: "cus_old", .googlePlay: "tok-keep"])

            try await client.query("drop trigger refuse_google on users")
            let again = try #require(try await db.user(id: "u-1"))
            var cleared = Self.verdict(again, identifiers: [:])
            cleared.truth?.tier = 2
            #expect(try await db.verdicts.apply(cleared, runID: "run-u2") == .applied(intentsQueued: 0, intentsDeduplicated: 0))
            #expect(try await db.user(id: "u-1")?.identifiers == [.stripe: "cus_new", .googlePlay: "tok-keep"])
        }
    }
}
