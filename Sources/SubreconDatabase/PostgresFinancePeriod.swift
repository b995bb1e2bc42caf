import Foundation
import Logging
import PostgresNIO
import SubreconCore
import SubreconPorts

// docs/CONTRACT.md, "subrecon finance": the period's runs, their applied changes and stocks, and `refunds_seen`,
// read set-based over indexed columns (`reconcile_runs.as_of`, the ledger's applied entries, `refunds_seen.refunded_at`).
// Read only: nothing here writes.
extension PostgresFinancePeriod {
    public func financeRuns(from: Date, to: Date) async throws -> [FinanceRun] {
        try await run("read the period's runs") {
            let rows = try await session.query(
                """
                select id, mode, as_of, shard_index, shard_count, dry_run, status, started_at, finished_at \
                from reconcile_runs where as_of >= \(Timestamp(from)) and as_of < \(Timestamp(to)) order by as_of, id
                """, logger: logger)
            var runs: [FinanceRun] = []
            for try await (id, mode, asOf, index, count, dryRun, status, started, finished) in rows.decode(
                (String, String, Date, Int, Int, Bool, String, Date, Date?).self)
            {
                runs.append(
                    FinanceRun(
                        id: id, mode: try Self.runMode(mode), asOf: roundedToMicros(asOf),
                        shard: try ShardSpec.stored(index: index, count: count), dryRun: dryRun,
                        status: try Self.runStatus(status), startedAt: roundedToMicros(started),
                        finishedAt: finished.map(roundedToMicros)))
            }
            return runs
        }
    }

    public func financeChanges(runID: String, afterSeq: Int64, limit: Int) async throws -> [FinanceLedgerEntry] {
        // Over the partial index of applied entries (`reconcile_verdicts_applied_idx`).
        try await financeEntries(
            runID: runID,
            """
            select seq, verdict::text, outcome from reconcile_verdicts \
            where run_id = \(runID) and outcome = 'applied' and seq > \(afterSeq) \
            and verdict->>'action' in ('downgrade', 'restore', 'extend') order by seq limit \(max(1, limit))
            """)
    }

    public func financeStocks(runID: String, afterSeq: Int64, limit: Int) async throws -> [FinanceLedgerEntry] {
        try await financeEntries(
            runID: runID,
            """
            select seq, verdict::text, outcome from reconcile_verdicts \
            where run_id = \(runID) and seq > \(afterSeq) and verdict->'truth'->>'status' = 'billing_issue' \
            and (verdict->'truth'->>'tier')::int > 0 order by seq limit \(max(1, limit))
            """)
    }

    /// The ledger entries of `runID` that `query` selects (`seq`, `verdict::text`, `outcome`), decoded.
    private func financeEntries(runID: String, _ query: PostgresQuery) async throws -> [FinanceLedgerEntry] {
        try await run("read the period's ledgers") {
            let rows = try await session.query(query, logger: logger)
            let decoder = JSONDecoder()
            var entries: [FinanceLedgerEntry] = []
            for try await (seq, text, outcome) in rows.decode((Int64, String, String?).self) {
                let verdict = try decoder.decode(Verdict.self, from: Data(text.utf8))
                entries.append(
                    FinanceLedgerEntry(runID: runID, seq: seq, verdict: verdict, outcome: try outcome.map(Self.ledgerOutcome)))
            }
            return entries
        }
    }

    public func financeRefunds(from: Date, to: Date, after: (store: String, transactionID: String)?, limit: Int) async throws
        -> [FinanceRefundRow]
    {
        let afterStore = after?.store
        let afterTransaction = after?.transactionID ?? ""
        return try await run("read the period's refunds") {
            let rows = try await session.query(
                """
                select user_id, run_id, store, transaction_id, refunded_at, amount::text, currency from refunds_seen \
                where refunded_at >= \(Timestamp(from)) and refunded_at < \(Timestamp(to)) \
                and (\(afterStore)::text is null or (store, transaction_id) > (\(afterStore)::text, \(afterTransaction)::text)) \
                order by store, transaction_id limit \(max(1, limit))
                """, logger: logger)
            var refunds: [FinanceRefundRow] = []
            for try await (user, runID, store, transaction, at, amount, currency) in rows.decode(
                (String, String, String, String, Date, String?, String?).self)
            {
                refunds.append(
                    FinanceRefundRow(
                        userID: user, runID: runID,
                        refund: SeenRefund(
                            store: store, transactionID: transaction, refundedAt: roundedToMicros(at), amount: Self.decimal(amount),
                            currency: currency)))
            }
            return refunds
        }
    }
}
