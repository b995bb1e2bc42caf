import ArgumentParser
import Foundation
import SubreconApp
import SubreconCore
import SubreconJob
import SubreconReports

/// `subrecon finance` (docs/CONTRACT.md, "subrecon finance").
struct Finance: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "The finance figures of a period across every night and shard: flows once, stocks at the end, gaps said (read only).",
        discussion:
            "Writes finance-FROM-TO.csv, .json, .md and .html (and -details.csv with --details) into --report-dir and prints the short table. Exit 0 when every night of every shard completed, 5 when the period has gaps, 64 bad options, 69/78 the database."
    )

    @Option(help: "Start of the period, a whole RFC 3339 instant (inclusive).") var from: String?
    @Option(help: "End of the period, a whole RFC 3339 instant (exclusive).") var to: String?
    @Option(help: "A calendar month, UTC (YYYY-MM), instead of --from/--to.") var month: String?
    @Option(help: "The folder the period's files are written into (created when missing; never a run folder).")
    var reportDir: String = "reports/finance"
    @Flag(help: "Also write finance-FROM-TO-details.csv: one row per counted event; its sums are the figures.")
    var details = false

    func validate() throws {
        do {
            _ = try FinancePeriodRange.parse(from: from, to: to, month: month)
        } catch let failure as CommandFailure {
            throw ValidationError(failure.description)
        }
    }

    func run() async throws {
        let env = Startup.environment()
        let logger = Startup.logger(env)
        try await Startup.guarded(logger) {
            let range = try FinancePeriodRange.parse(from: from, to: to, month: month)
            let result = try await Commands.finance(
                environment: env, range: range, reportDirectory: URL(fileURLWithPath: reportDir), details: details, logger: logger)
            print(FinancePeriodText.table(result.report, folder: result.folder))
            return result.exitStatus
        }
    }
}
