import Foundation
import StoreSimulator
import SubreconCore
import SubreconJob
import SubreconPorts
import SubreconReports
import SubreconTestSupport
import SubreconTestWorld
import Testing

/// CONTRACT "Hostile answers and bounded work", black box: RevenueCat answers over loopback in the real wire format, the real job, a real
/// PostgreSQL. A date with trailing bytes or centuries ahead is unusable evidence: that user ends `fetch_error`,
/// untouched, while a normal user in the same night is reconciled (exit 1).
@Suite(
    "Strict dates end to end: an unusable RevenueCat date leaves the user untouched", .serialized)
struct StrictDateJobTests {
    static func iso(_ days: Double) -> String { ISO8601.string(JobWorld.day(days)) }

    /// A premium_monthly subscription and its entitlement, both expiring at `expires` (JSON string text, as sent).
    static func body(expires: String) -> Data {
        RevenueCatWorld.subscriberBody(
            entitlements:
                #"{"premium": {"expires_date": \#(expires), "product_identifier": "premium_monthly", "purchase_date": "\#(iso(-2))"}}"#,
            subscriptions: #"""
                {"premium_monthly": {"store": "app_store", "is_sandbox": false, "purchase_date": "\#(iso(-2))",
                 "original_purchase_date": "\#(iso(-100))", "expires_date": \#(expires), "period_type": "normal",
                 "store_transaction_id": "t-1", "price": {"amount": 9.99, "currency": "USD"}}}
                """#)
    }

    @Test(
        "expires_date with a trailing NUL, or in year 2999, is fetch_error and untouched; a normal user is reconciled (exit 1)",
        arguments: JobWorld.backends)
    func unusableDates(_ backend: WorldBackend) async throws {
        try await JobWorld.with(backend) { h in
            let hostile: [(id: String, tier: Int, status: String, end: Double, expires: String)] = [
                // Believed, it would extend a lapsing user to 2027.
                ("d-nul-extend", 1, "active", -1, #""2027-01-01T00:00:00Z\u0000""#),
                // Believed, it would downgrade a paying user (a past date followed by a NUL).
                ("d-nul-downgrade", 1, "active", -1, #""2026-05-30T00:00:00Z\u0000""#),
                // Believed, it would extend a user by centuries.
                ("d-2999", 1, "active", -1, #""2999-01-01T00:00:00Z""#),
                // An impossible calendar date.
                ("d-feb30", 1, "active", -1, #""2026-02-30T00:00:00Z""#),
            ]
            for user in hostile {
                try await h.seed(h.row(user.id, tier: user.tier, user.status, end: user.end))
                await h.revenueCat.setFault(
                    .raw(status: 200, headers: ["content-type": "application/json"], body: Self.body(expires: user.expires)), for: user.id)
            }
            try await h.seed(h.row("d-plain", tier: 1, "active", end: -1))
            await h.revenueCat.setFault(
                .raw(status: 200, headers: ["content-type": "application/json"], body: Self.body(expires: #""\#(Self.iso(29))""#)),
                for: "d-plain")

            let result = try await h.run()
            #expect(result.exitStatus == .userErrors)
            let report = try h.report(result)
            for user in hostile {
                let row = try #require(try await h.user(user.id))
                #expect(row.currentTier == user.tier && row.statusText == user.status, "\(user.id) untouched")
                #expect(row.endDate == JobWorld.day(user.end), "\(user.id) keeps its end date")
                #expect(try await h.auditRows(user.id) == 0)
                #expect(try await h.intents(user.id) == 0)
                #expect(report[user.id]?.drift.contains("fetch_error") == true, "\(user.id) reported fetch_error")
            }
            let plain = try #require(try await h.user("d-plain"))
            #expect(plain.currentTier == 1 && plain.endDate == JobWorld.day(29), "the normal user is extended")
            #expect(report["d-plain"]?.drift.contains("fetch_error") == false)
        }
    }
}
