import Foundation
import SubreconCore
import Testing

@testable import SubreconReports

@Suite("drift.json price fields, family shared and trial rows apart, refund_review.csv")
struct FinanceRowTests {
    static let asOf = ISO8601.date("2026-06-01T03:00:00Z")!

    static func verdict(
        _ id: String, dbTier: Int = 1, truthTier: Int, status: SubscriptionStatus, action: Action, store: StoreKind = .appStore,
        price: FinancePrice?
    ) -> Verdict {
        let row = UserRow(id: id, currentTier: dbTier, status: "active", endDate: asOf, source: "apple_iap", productID: "p")
        let truth = Entitlement(
            tier: truthTier, status: status, endDate: asOf, graceEndsAt: nil, source: "apple_iap", productID: "p",
            originalTransactionID: nil, autoRenew: true)
        var verdict = Verdict(row: row, truth: truth, action: action, drift: [.missedRefund], store: store)
        verdict.financePrice = price
        return verdict
    }

    @Test("a row in a finance figure carries price_amount, price_currency and price_basis; others carry null")
    func rowFields() throws {
        let refund = ReportRow(
            runID: "r",
            verdict: Self.verdict(
                "u1", truthTier: 0, status: .refunded, action: .downgrade,
                price: FinancePrice(amount: Decimal(string: "3.5"), currency: "kwd", basis: .paid)), applied: true)
        #expect(refund.priceAmount == "3.5" && refund.priceCurrency == "KWD" && refund.priceBasis == "paid")
        let json = String(decoding: try JSONEncoder().encode(refund), as: UTF8.self)
        #expect(json.contains(#""price_amount":"3.5""#) && json.contains(#""price_basis":"paid""#))
        let decoded = try JSONDecoder().decode(ReportRow.self, from: Data(json.utf8))
        #expect(decoded == refund)
        #expect(refund.csvFields.count == ReportRow.columns.count && ReportRow.columns.count == 17, "drift.csv keeps its columns")

        let unknown = ReportRow(
            runID: "r", verdict: Self.verdict("u2", truthTier: 1, status: .billingIssue, action: .statusChange, price: nil), applied: true)
        #expect(unknown.priceAmount == nil && unknown.priceCurrency == nil && unknown.priceBasis == "unknown")
        let inSync = ReportRow(
            runID: "r", verdict: Self.verdict("u3", truthTier: 1, status: .active, action: .none, price: nil), applied: false)
        #expect(inSync.priceBasis == nil)
        let inSyncJSON = String(decoding: try JSONEncoder().encode(inSync), as: UTF8.self)
        #expect(inSyncJSON.contains(#""price_basis":null"#))
    }

    @Test("figures are sums of rows: family shared and trial rows in their own sections at 0")
    func figuresFromRows() {
        var summary = RunSummary(runID: "r", mode: "nightly", asOf: Self.asOf, shard: "0/1", dryRun: false, startedAt: Self.asOf)
        let verdicts = [
            Self.verdict(
                "a", truthTier: 0, status: .refunded, action: .downgrade,
                price: FinancePrice(amount: Decimal(string: "9.99"), currency: "USD", basis: .paid)),
            Self.verdict(
                "b", truthTier: 0, status: .refunded, action: .downgrade,
                price: FinancePrice(amount: Decimal(string: "0.01"), currency: "USD", basis: .paid)),
            Self.verdict(
                "c", truthTier: 0, status: .refunded, action: .downgrade,
                price: FinancePrice(amount: 0, currency: "USD", basis: .familyShared)),
            Self.verdict(
                "d", dbTier: 0, truthTier: 1, status: .active, action: .restore, store: .playStore,
                price: FinancePrice(amount: 0, currency: nil, basis: .trial)),
            Self.verdict(
                "e", dbTier: 0, truthTier: 1, status: .billingIssue, action: .restore,
                price: FinancePrice(amount: 1200, currency: "JPY", basis: .renewal)),
        ]
        for verdict in verdicts { summary.finance.add(ReportRow(runID: "r", verdict: verdict, applied: true)) }
        let rows = FinanceCSV.rows(summary).filter { $0[1] != "product_drift" }.map { $0.joined(separator: ",") }
        #expect(rows.contains("r,store_currency,app_store,USD,,refunds,2,10,0"))
        #expect(rows.contains("r,family_shared,app_store,USD,,refunds,1,0,0"))
        #expect(rows.contains("r,trial,play_store,unknown,,restored,1,0,0"))
        #expect(rows.contains("r,store_currency,app_store,JPY,,billing_issue_at_risk,1,1200,0"))
        #expect(rows.contains("r,store_currency,app_store,JPY,,restored,1,1200,0"))
        // Revenue charts and metrics leave the 0-valued groups out.
        #expect(summary.finance.revenueBuckets.allSatisfy { $0.group == .revenue })
        let html = SummaryHTML.financeTable(summary)
        #expect(html.contains("Revenue at risk (their next renewal price)") && html.contains("free trial (not revenue, 0)"))
        #expect(!html.contains("billing_issue_at_risk"), "headings are words, not column names")
    }

    @Test("a summary stored before the groups existed decodes its buckets as revenue")
    func oldSummaries() throws {
        let json =
            #"{"store":"app_store","currency":"USD","refunds":{"count":1,"value":9.99,"unknown_price":0},"billing_issue_at_risk":{"count":0,"value":0,"unknown_price":0},"restored":{"count":0,"value":0,"unknown_price":0}}"#
        let bucket = try JSONDecoder().decode(FinanceFigures.Bucket.self, from: Data(json.utf8))
        #expect(bucket.group == .revenue && bucket.refunds.count == 1)
    }

    @Test("refund_review.csv: user, refunds, stores, first and last refund, by user id; formula text defused")
    func reviewCSV() {
        let text = RefundReviewCSV.text([
            RefundReviewEntry(
                userID: "=cmd", refunds: 3, stores: ["play_store", "app_store"], firstRefund: Self.asOf, lastRefund: Self.asOf),
            RefundReviewEntry(
                userID: "a", refunds: 4, stores: ["stripe"], firstRefund: Self.asOf.addingTimeInterval(-86_400), lastRefund: Self.asOf),
        ])
        #expect(
            text == "user_id,refunds,stores,first_refund,last_refund\r\n"
                + "'=cmd,3,app_store;play_store,2026-06-01T03:00:00Z,2026-06-01T03:00:00Z\r\n"
                + "a,4,stripe,2026-05-31T03:00:00Z,2026-06-01T03:00:00Z\r\n")
    }
}
