import Foundation
import Logging
import PostgresNIO
import SubreconApp
import SubreconCore
import SubreconDatabase
import SubreconJob
import SubreconPorts
import SubreconReports
import SubreconTestKit
import SubreconTestSupport
import Testing

/// `subrecon finance` against real PostgreSQL (docs/CONTRACT.md, "subrecon finance"): the month of `FinanceMonthFixture`
/// written through the database's own writes, read back by the command; and one real night whose `finance.csv` the
/// period report agrees with.
@Suite("Finance over a period (real PostgreSQL)", .serialized, .enabled(if: TestDatabase.isEnabled, TestDatabase.skipMessage))
struct FinancePeriodIntegrationTests {
    static let logger = Logger(label: "subrecon.tests.finance")

    /// Writes the month: the runs, their ledgers (then each entry's outcome), and the refunds as each run kept them.
    static func load(_ db: SubscriptionDatabase, _ client: PostgresClient) async throws {
        for run in FinanceMonthFixture.runs {
            try await db.runs.startRun(
                RunRecord(
                    id: run.id, mode: run.mode, asOf: run.asOf, shard: run.shard, dryRun: run.dryRun, status: run.status,
                    startedAt: run.startedAt, finishedAt: run.finishedAt))
        }
        for (runID, entries) in Dictionary(grouping: FinanceMonthFixture.entries, by: \.runID) {
            try await db.verdicts.appendVerdicts(runID: runID, entries.map(\.verdict), seqs: entries.map(\.seq), progress: RunProgress())
            for entry in entries {
                guard let outcome = entry.outcome?.rawValue else { continue }
                try await client.query(
                    "update reconcile_verdicts set outcome = \(outcome) where run_id = \(runID) and seq = \(entry.seq)")
            }
        }
        for refund in FinanceMonthFixture.refunds {
            _ = try await db.refunds.recordRefunds(runID: refund.runID, [(userID: refund.userID, refund: refund.refund)])
        }
    }

    static func line(_ l: FinanceLine) -> String {
        let k = l.key
        let place = k.shard.map { " \($0) \(k.night ?? "")" } ?? ""
        return "\(k.figure) \(k.store) \(k.currency) \(k.basis)\(place) \(l.count) \(FinanceCSV.decimalString(l.value)) \(l.unknownPrice)"
    }

    @Test("a month of nights: flows once, stocks at the end, every gap, exit 5; the details sum to the figures; nothing written")
    func month() async throws {
        try await TestDatabase.withSchema(migrated: true) { schema in
            try await Self.load(schema.db, schema.client)
            #expect(
                try await TestDatabase.scalar(
                    schema.client, "select count(*)::int from refunds_seen where transaction_id = 'GPA.1'", as: Int.self) == 1,
                "the refund the feed and the lookup both saw is kept once")
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("finance-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: folder) }
            let before = try await Self.tableCounts(schema.client)
            let result = try await Commands.finance(
                environment: ProcessEnvironment(["DATABASE_URL": schema.databaseURL]),
                range: try FinancePeriodRange.parse(from: nil, to: nil, month: "2026-11"), reportDirectory: folder, details: true,
                now: FinanceMonthFixture.now, logger: Self.logger)
            #expect(result.report.flows.map(Self.line) == FinanceMonthFixture.expectedFlows)
            #expect(result.report.stocks.map(Self.line) == FinanceMonthFixture.expectedStocks)
            #expect(result.report.gaps.map { "\($0.night) \($0.shard) \($0.kind)" } == FinanceMonthFixture.expectedGaps)
            #expect(result.exitStatus == .periodGaps)
            #expect(try await Self.tableCounts(schema.client) == before, "read only")

            // The details file, summed on its own, gives the figures.
            let details = try String(
                contentsOf: folder.appendingPathComponent("finance-2026-11-01-2026-12-01-details.csv"), encoding: .utf8)
            #expect(Set(Self.sums(details)) == Set(FinanceMonthFixture.expectedFlows + FinanceMonthFixture.expectedStocks))
            let csv = try String(contentsOf: folder.appendingPathComponent("finance-2026-11-01-2026-12-01.csv"), encoding: .utf8)
            #expect(csv.contains("gap,missing,,,,,,,0/2,2026-11-20,\r\n"))
            #expect(csv.contains("flow,restored,app_store,USD,renewal,2,19.98,0,,,\r\n"))
            let md = try String(contentsOf: folder.appendingPathComponent("finance-2026-11-01-2026-12-01.md"), encoding: .utf8)
            #expect(md.contains("| 2026-11-05 | 1/2 | failed | n05-s1-failed |"))
            let json =
                try JSONSerialization.jsonObject(
                    with: Data(contentsOf: folder.appendingPathComponent("finance-2026-11-01-2026-12-01.json"))) as? [String: Any]
            #expect((json?["gaps"] as? [Any])?.count == 4)
        }
    }

    /// The details rows summed by their key, as `FinanceMonthFixture` writes the expected lines.
    static func sums(_ details: String) -> [String] {
        let rows = details.components(separatedBy: "\r\n").dropFirst().filter { !$0.isEmpty }.map { $0.components(separatedBy: ",") }
        var sums: [String: (count: Int, value: Decimal, unknown: Int)] = [:]
        for r in rows where r[0] != "gap" {
            let key = r[0] == "stock" ? "\(r[1]) \(r[3]) \(r[8]) \(r[9]) \(r[11]) \(r[12])" : "\(r[1]) \(r[3]) \(r[8]) \(r[9])"
            var sum = sums[key] ?? (0, 0, 0)
            sum.count += 1
            if !r[7].isEmpty, let amount = Decimal(string: r[7]) { sum.value += amount } else { sum.unknown += 1 }
            sums[key] = sum
        }
        return sums.map { "\($0.key) \($0.value.count) \(FinanceCSV.decimalString($0.value.value)) \($0.value.unknown)" }
    }

    static func tableCounts(_ client: PostgresClient) async throws -> [Int] {
        var counts: [Int] = []
        for table in ["reconcile_runs", "reconcile_verdicts", "refunds_seen", "reconcile_changes", "push_intents"] {
            counts.append(try await TestDatabase.scalar(client, "select count(*)::int from \(unescaped: table)", as: Int.self) ?? -1)
        }
        return counts
    }

    @Test("the database: unreachable 69, not migrated 78")
    func databaseExits() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("finance-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let range = try FinancePeriodRange.parse(from: nil, to: nil, month: "2026-11")
        let unreachable = await commandFailure {
            try await Commands.finance(
                environment: ProcessEnvironment(["DATABASE_URL": "postgres://postgres@127.0.0.1:1/nowhere?sslmode=disable"]), range: range,
                reportDirectory: folder, details: false, logger: Self.logger)
        }
        #expect(unreachable?.status == .unavailable)
        try await TestDatabase.withSchema(migrated: false) { schema in
            let bare = await commandFailure {
                try await Commands.finance(
                    environment: ProcessEnvironment(["DATABASE_URL": schema.databaseURL]), range: range, reportDirectory: folder,
                    details: false, logger: Self.logger)
            }
            #expect(bare?.status == .config)
        }
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("finance-2026-11-01-2026-12-01.csv").path))
    }
}
