import Foundation
import SubreconCore
import SubreconPorts

/// `FinancePeriodSource` in memory, reading as `PostgresFinancePeriod` reads PostgreSQL: runs by as-of,
/// applied downgrades, restores and extensions, entitled billing-issue entries, `refunds_seen` once per store
/// transaction (the first run to keep a refund named with it).
public struct InMemoryFinanceSource: FinancePeriodSource {
    public var runs: [FinanceRun]
    public var entries: [FinanceMonthFixture.Entry]
    public var refunds: [FinanceMonthFixture.Refund]

    public init(runs: [FinanceRun], entries: [FinanceMonthFixture.Entry], refunds: [FinanceMonthFixture.Refund]) {
        self.runs = runs
        self.entries = entries
        self.refunds = refunds
    }

    /// The month of `FinanceMonthFixture`.
    public static var month: InMemoryFinanceSource {
        InMemoryFinanceSource(runs: FinanceMonthFixture.runs, entries: FinanceMonthFixture.entries, refunds: FinanceMonthFixture.refunds)
    }

    public func financeRuns(from: Date, to: Date) async throws -> [FinanceRun] {
        runs.filter { $0.asOf >= from && $0.asOf < to }.sorted { ($0.asOf, $0.id) < ($1.asOf, $1.id) }
    }

    public func financeChanges(runID: String, afterSeq: Int64, limit: Int) async throws -> [FinanceLedgerEntry] {
        page(runID: runID, afterSeq: afterSeq, limit: limit) {
            $0.outcome == .applied && [.downgrade, .restore, .extend].contains($0.verdict.action)
        }
    }

    public func financeStocks(runID: String, afterSeq: Int64, limit: Int) async throws -> [FinanceLedgerEntry] {
        page(runID: runID, afterSeq: afterSeq, limit: limit) {
            ($0.verdict.truth?.tier ?? 0) > 0 && $0.verdict.truth?.status == .billingIssue
        }
    }

    func page(runID: String, afterSeq: Int64, limit: Int, _ keep: (FinanceMonthFixture.Entry) -> Bool) -> [FinanceLedgerEntry] {
        entries.filter { $0.runID == runID && $0.seq > afterSeq && keep($0) }.sorted { $0.seq < $1.seq }.prefix(limit)
            .map { FinanceLedgerEntry(runID: $0.runID, seq: $0.seq, verdict: $0.verdict, outcome: $0.outcome) }
    }

    public func financeRefunds(from: Date, to: Date, after: (store: String, transactionID: String)?, limit: Int) async throws
        -> [FinanceRefundRow]
    {
        var kept: [String: FinanceRefundRow] = [:]
        for r in refunds where kept["\(r.refund.store)|\(r.refund.transactionID)"] == nil {
            kept["\(r.refund.store)|\(r.refund.transactionID)"] = FinanceRefundRow(userID: r.userID, runID: r.runID, refund: r.refund)
        }
        return kept.values.filter { $0.refund.refundedAt >= from && $0.refund.refundedAt < to }
            .filter { row in after.map { (row.refund.store, row.refund.transactionID) > ($0.store, $0.transactionID) } ?? true }
            .sorted { ($0.refund.store, $0.refund.transactionID) < ($1.refund.store, $1.refund.transactionID) }.prefix(limit).map { $0 }
    }
}
