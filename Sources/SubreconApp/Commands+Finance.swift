import Foundation
import Logging
import SubreconCore
import SubreconDatabase
import SubreconJob
import SubreconPorts
import SubreconReports

extension Commands {
    /// `subrecon finance` (docs/CONTRACT.md, "subrecon finance"): the finance figures of `range` across every night and
    /// shard, read from the database (read only) and written into `reportDirectory`. Needs the database only: no source
    /// is configured or asked. Unreachable 69, a schema not migrated 78, a folder it cannot write 78.
    public static func finance(
        environment env: ProcessEnvironment, range: FinancePeriodRange, reportDirectory: URL, details: Bool, now: Date = Date(),
        logger: Logger
    ) async throws -> FinanceClose.Result {
        let config = try SubreconConfiguration.load(env, requireSource: false)
        return try await withDatabase(config.database, logger: logger) { database in
            try await FinanceClose.run(source: database.finance, range: range, now: now, directory: reportDirectory, details: details)
        }
    }
}
