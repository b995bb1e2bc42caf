import Foundation
import SubreconApp
import SubreconCore
import SubreconJob
import SubreconReports
import Testing

/// A period of one night agrees with that night's `finance.csv` (docs/CONTRACT.md, "subrecon finance"): the varied night of
/// `FinanceNightTests`, run for real, then closed as a period.
@Suite("Finance over one night agrees with the night's finance.csv", .serialized, .enabled(if: Harness.isEnabled, Harness.skip))
struct FinanceSingleNightTests {
    /// The period's lines as the nightly file groups them: `section,store,currency,figure,count,value,unknown_price`, the
    /// nightly `refunds` (tiers revoked by refund) being the period's `downgraded_refunded`.
    static func nightly(_ report: FinancePeriodReport) -> Set<String> {
        let figures = ["downgraded_refunded": "refunds", "restored": "restored", "billing_issue_at_risk": "billing_issue_at_risk"]
        var sums: [String: FinanceLine] = [:]
        for line in report.flows + report.stocks {
            guard let figure = figures[line.key.figure] else { continue }
            let section = ["family_shared": "family_shared", "trial": "trial"][line.key.basis] ?? "store_currency"
            let key = "\(section),\(line.key.store),\(line.key.currency),\(figure)"
            var sum = sums[key] ?? FinanceLine(key: line.key)
            sum.count += line.count
            sum.value += line.value
            sum.unknownPrice += line.unknownPrice
            sums[key] = sum
        }
        return Set(sums.map { "\($0.key),\($0.value.count),\(FinanceCSV.decimalString($0.value.value)),\($0.value.unknownPrice)" })
    }

    @Test("every flow and the stock of a single-night period equal the night's finance.csv lines")
    func singleNight() async throws {
        try await Harness.with(apple: true) { h in
            try await FinanceNightTests.seedNight(h)
            let night = try await h.run {
                $0.maxDowngradeRatio = 1
                $0.userIDs = FinanceNightTests.users
            }
            #expect(night.exitStatus == .ok)
            let start = Harness.asOf.addingTimeInterval(-3 * 3_600)  // the night of the run: 2026-06-01, UTC
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("finance-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: folder) }
            let period = try await Commands.finance(
                environment: h.env, range: FinancePeriodRange(from: start, to: start.addingTimeInterval(86_400)), reportDirectory: folder,
                details: true, now: Harness.day(2), logger: h.logger)
            #expect(period.exitStatus == .ok, "one completed night of one shard: no gap \(period.report.gaps)")
            #expect(period.report.runsCounted == [night.summary.runID])
            // finance.csv's lines with a count, without the run id and the empty product column.
            let nightly = try h.csvLines(night, "finance.csv").dropFirst().filter { !$0.contains(",product_drift,") }.compactMap {
                line -> String? in
                let cells = line.components(separatedBy: ",")
                guard cells[6] != "0" else { return nil }
                return ([cells[1], cells[2], cells[3], cells[5]] + cells[6...]).joined(separator: ",")
            }
            #expect(!nightly.isEmpty)
            #expect(Self.nightly(period.report) == Set(nightly))
        }
    }
}
