import Foundation
import Logging
import SubreconApp
import SubreconCore
import SubreconJob
import SubreconReports

extension DemoRunner {
    /// `subrecon finance` over the demo's nights (docs/CONTRACT.md, "subrecon finance"): the UTC day of the runs' as-of,
    /// once per database (run 1's into `REPORT_DIR/finance`, run 2's into `REPORT_DIR/finance/without-revenuecat`).
    /// Read only; prints each period's short table.
    static func closeNights(
        asOf: Date, databases: [(name: String, url: String, folder: String)], reportDirectory: URL, logger: Logger,
        say: @Sendable (String) -> Void
    ) async throws {
        var utc = Calendar(identifier: .gregorian)
        utc.timeZone = TimeZone(identifier: "UTC")!
        let start = utc.startOfDay(for: asOf)
        let range = FinancePeriodRange(from: start, to: start.addingTimeInterval(86_400))
        for database in databases {
            let folder = reportDirectory.appendingPathComponent(database.folder)
            say(
                "demo: subrecon finance --from \(ISO8601.string(range.from)) --to \(ISO8601.string(range.to)) --details "
                    + "(\(database.name); read only):")
            let result = try await Commands.finance(
                environment: ProcessEnvironment(["DATABASE_URL": database.url]), range: range, reportDirectory: folder, details: true,
                logger: logger)
            say(FinancePeriodText.table(result.report, folder: result.folder))
        }
    }
}
