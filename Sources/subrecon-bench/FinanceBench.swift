import Foundation
import Logging
import PostgresNIO
import SubreconCore
import SubreconDatabase
import SubreconJob
import SubreconPorts
import SubreconReports

/// `--finance-year`: `subrecon finance` over a year of nightly runs of a large app (docs/CONTRACT.md, "subrecon
/// finance"): `nights` completed runs, each with `verdicts` ledger entries of which `applied` restores and `atRisk`
/// billing-issue users, and refunds dated across the year; then the period read with the details file, timed.
enum FinanceBench {
    struct Shape {
        var nights: Int
        var verdicts: Int
        var applied: Int
        var atRisk: Int
        var refunds: Int
    }

    static func run(database: BenchDatabase, shape: Shape, logger: Logger) async throws {
        let clock = ContinuousClock()
        let start = Date(timeIntervalSince1970: 1_767_225_600)  // 2026-01-01T00:00:00Z
        say("seeding \(shape.nights) nights × \(shape.verdicts) verdicts (\(shape.applied) applied, \(shape.atRisk) at risk) ...")
        let seedStart = clock.now
        try await seed(database: database, shape: shape, start: start, logger: logger)
        say("seeded in \(String(format: "%.1f", ScanBench.seconds(clock.now - seedStart))) s")
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("subrecon-bench-finance-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let range = FinancePeriodRange(from: start, to: start.addingTimeInterval(Double(shape.nights) * 86_400))
        let (result, elapsed) = try await database.withDatabase(logger: logger) { db, _ in
            let readStart = clock.now
            let result = try await FinanceClose.run(
                source: db.finance, range: range, now: range.to.addingTimeInterval(86_400), directory: folder, details: true)
            return (result, ScanBench.seconds(clock.now - readStart))
        }
        let details =
            (try? String(contentsOf: folder.appendingPathComponent("\(range.stem)-details.csv"), encoding: .utf8))?
            .components(separatedBy: "\r\n").count ?? 0
        print(
            """
            | nights | verdicts | applied changes | at-risk entries | refunds | finance s | details lines | gaps | peak RSS MB |
            | --- | --- | --- | --- | --- | --- | --- | --- | --- |
            | \(shape.nights) | \(shape.nights * shape.verdicts) | \(shape.nights * shape.applied) | \(shape.nights * shape.atRisk) \
            | \(shape.refunds) | \(String(format: "%.2f", elapsed)) | \(max(0, details - 2)) | \(result.report.gaps.count) \
            | \(String(format: "%.1f", peakRSSMegabytes())) |
            """)
    }

    /// The runs, the ledgers (one `insert … select from generate_series` per night) and the refunds, then `analyze`.
    static func seed(database: BenchDatabase, shape: Shape, start: Date, logger: Logger) async throws {
        let encoder = JSONEncoder()
        func template(_ action: Action, _ drift: [Drift], truth: SubscriptionStatus, price: FinancePrice?) throws -> String {
            let row = UserRow(
                id: "__USER__", currentTier: action == .restore ? 0 : 1, status: action == .restore ? "expired" : "active",
                endDate: start, source: "apple_iap", productID: BenchDatabase.product, originalTransactionID: "tx-__USER__")
            var verdict = Verdict(
                row: row,
                truth: Entitlement(
                    tier: 1, status: truth, endDate: start.addingTimeInterval(30 * 86_400), graceEndsAt: nil, source: "apple_iap",
                    productID: BenchDatabase.product, originalTransactionID: "tx-__USER__", autoRenew: true),
                action: action, sources: [.revenueCat, .appStore], drift: drift, store: .appStore)
            verdict.financePrice = price
            return String(decoding: try encoder.encode(verdict), as: UTF8.self)
        }
        let usd = FinancePrice(amount: Decimal(string: "9.99"), currency: "USD", basis: .renewal)
        let inSync = try template(.none, [.inSync], truth: .active, price: nil)
        let restored = try template(.restore, [.missedRenewal], truth: .active, price: usd)
        let atRisk = try template(.none, [.inSync], truth: .billingIssue, price: usd)
        try await database.withClient(logger: logger) { client in
            for night in 0..<shape.nights {
                let asOf = start.addingTimeInterval(Double(night) * 86_400 + 3 * 3_600)
                let runID = String(format: "bench-night-%03d", night)
                try await client.query(
                    """
                    insert into reconcile_runs (id, mode, as_of, status, started_at, finished_at) \
                    values (\(runID), 'nightly', \(asOf), 'completed', \(asOf), \(asOf))
                    """, logger: logger)
                try await client.query(
                    """
                    insert into reconcile_verdicts (run_id, seq, user_id, verdict, outcome) \
                    select \(runID), g, 'u' || lpad(g::text, 9, '0'), replace(case \
                    when g < \(shape.applied) then \(restored) when g < \(shape.applied + shape.atRisk) then \(atRisk) \
                    else \(inSync) end, '__USER__', 'u' || lpad(g::text, 9, '0'))::jsonb, \
                    case when g < \(shape.applied) then 'applied' else 'unchanged' end \
                    from generate_series(0, \(shape.verdicts - 1)) as g
                    """, logger: logger)
            }
            try await client.query(
                """
                insert into refunds_seen (db, transaction_id, user_id, refunded_at, amount, currency, run_id) \
                select 'app_store', 'r' || g, 'u' || g, \(start) + (g % \(shape.nights)) * interval '1 day', '9.99', 'USD', 'bench' \
                from generate_series(1, \(shape.refunds)) as g
                """, logger: logger)
            _ = try await client.query(PostgresQuery(unsafeSQL: "vacuum analyze reconcile_verdicts"), logger: logger)
            _ = try await client.query(PostgresQuery(unsafeSQL: "vacuum analyze refunds_seen"), logger: logger)
        }
    }

    /// The process's peak resident set (`VmHWM`), in MB; 0 where /proc is absent.
    static func peakRSSMegabytes() -> Double {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
            let kilobytes = Double(line.split(separator: " ").dropFirst().first ?? "")
        else { return 0 }
        return kilobytes / 1024
    }
}
