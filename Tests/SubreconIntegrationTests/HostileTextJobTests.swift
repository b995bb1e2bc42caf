import Foundation
import PostgresNIO
import StoreSimulator
import SubreconApp
import SubreconCore
import SubreconDatabase
import SubreconJob
import SubreconPorts
import SubreconReports
import Testing

@Suite(
    "Hostile text from a source: the run completes, the jsonb ledger and the reports hold it exactly", .serialized,
    .enabled(if: Harness.isEnabled, Harness.skip))
struct HostileTextJobTests {
    static func iso(_ day: Double) -> String { ISO8601.string(Harness.day(day)) }

    /// A RevenueCat answer: a valid premium_monthly subscription expiring at day +29, plus hostile text around it.
    static func body(productKey: String, transaction: String, extraProduct: String) -> Data {
        Data(
            """
            {"request_date":"\(iso(0))","subscriber":{"original_app_user_id":"x\\u0000y","first_seen":"\(iso(-300))",
            "entitlements":{"premium":{"expires_date":"\(iso(29))","product_identifier":"\(productKey)","purchase_date":"\(iso(-1))"}},
            "subscriptions":{"\(productKey)":{"store":"app_store","is_sandbox":false,"period_type":"normal\\u0000",
            "purchase_date":"\(iso(-1))","original_purchase_date":"\(iso(-100))","expires_date":"\(iso(29))",
            "store_transaction_id":"\(transaction)","price":{"amount":9.99,"currency":"USD"}}},
            "non_subscriptions":{"\(extraProduct)":[{"id":"n\\u0000","store":"app_store","purchase_date":"\(iso(-5))"}]}}}
            """.utf8)
    }

    @Test("NUL and invalid UTF-8 in RevenueCat answers reach neither jsonb nor reports raw; the run completes")
    func nulAndInvalidUTF8() async throws {
        try await Harness.with { h in
            // Valid product, NUL in the other text: decided as usual (extended to day +29).
            try await h.seed(h.row("u-nul-text", tier: 1, "active", end: -1))
            await h.revenueCat.setFault(
                .raw(
                    status: 200, headers: ["Content-Type": "application/json"],
                    body: Self.body(productKey: "premium_monthly", transaction: "tx\\u0000nul", extraProduct: "coins\\u0000pack")),
                for: "u-nul-text")
            // Invalid UTF-8 bytes in a transaction id and a product id.
            try await h.seed(h.row("u-bad-utf8", tier: 1, "active", end: -1))
            var bad = Self.body(productKey: "premium_monthly", transaction: "tx-BAD", extraProduct: "coins-BAD")
            bad = Data(String(decoding: bad, as: UTF8.self).replacingOccurrences(of: "BAD", with: "\u{1}").utf8)
            bad = Data(bad.map { $0 == 0x01 ? 0xFF : $0 })
            await h.revenueCat.setFault(.raw(status: 200, headers: ["Content-Type": "application/json"], body: bad), for: "u-bad-utf8")
            // The entitlement's product id itself holds a NUL: not a mapped product.
            try await h.seed(h.row("u-nul-product", tier: 1, "active", end: -1))
            await h.revenueCat.setFault(
                .raw(
                    status: 200, headers: ["Content-Type": "application/json"],
                    body: Self.body(productKey: "premium\\u0000monthly", transaction: "t", extraProduct: "c")),
                for: "u-nul-product")
            // An error answer whose message holds a NUL and invalid UTF-8: fetch_error, untouched.
            try await h.seed(h.row("u-nul-error", tier: 1, "active", end: -1))
            var errorBody = Data(#"{"code":7000,"message":"bad\u0000thing "#.utf8)
            errorBody.append(contentsOf: [0xFF, 0xFE])
            errorBody.append(contentsOf: Data(#""}"#.utf8))
            await h.revenueCat.setFault(.raw(status: 400, headers: [:], body: errorBody), for: "u-nul-error")
            // A plain user beside them.
            try await h.seed(h.row("u-plain", tier: 1, "active", end: -1), Harness.subscription(purchased: -1, expires: 29))

            let result = try await h.run()
            #expect(result.exitStatus == .ok || result.exitStatus == .userErrors)
            let ids = ["u-nul-text", "u-bad-utf8", "u-nul-product", "u-nul-error", "u-plain"]
            let verdicts = try await h.count("select count(*)::int from reconcile_verdicts where run_id = \(result.summary.runID)")
            #expect(verdicts == ids.count, "every user has a verdict in the jsonb ledger")
            let report = try h.report(result)
            #expect(Set(report.keys) == Set(ids))

            for id in ["u-nul-text", "u-bad-utf8", "u-plain"] {
                let row = try #require(try await h.user(id))
                #expect(row.currentTier == 1 && row.endDate == Harness.day(29), "\(id) extended from its valid subscription")
            }
            let failed = try #require(try await h.user("u-nul-error"))
            #expect(failed.currentTier == 1 && failed.endDate == Harness.day(-1), "an error leaves the row untouched")
            let errorRow = try #require(report["u-nul-error"])
            #expect(errorRow.drift.contains("fetch_error"))
            let message = try #require(errorRow.error)
            #expect(message.contains(#"bad\u0000thing"#))
            #expect(!message.unicodeScalars.contains("\u{0}"))

            // Nothing raw in any report file or in the ledger's text.
            for name in ["drift.csv", "drift.json", "summary.json", "summary.md", "summary.html", "finance.csv"] {
                let data = try Data(contentsOf: result.folder.appendingPathComponent(name))
                #expect(!data.contains(0), "\(name) holds a NUL byte")
                #expect(String(validating: data, as: UTF8.self) != nil, "\(name) is not UTF-8")
            }
            let ledgerText = try await h.client.query(
                "select string_agg(verdict::text, '') from reconcile_verdicts where run_id = \(result.summary.runID)")
            for try await text in ledgerText.decode(String.self) { #expect(!text.unicodeScalars.contains("\u{0}")) }
        }
    }
}
