import Foundation
import Logging
import PostgresNIO
import SubreconCore
import SubreconDatabase
import SubreconPorts

/// `--scan-only`: the nightly candidate scan alone over a large table, with the plan of one page.
enum ScanBench {
    static func run(
        database: BenchDatabase, users: Int, stride: Int, asOf: Date, pageSize: Int, sweepDays: Int = 0, logger: Logger
    ) async throws {
        let clock = ContinuousClock()
        say("seeding \(users) users, every \(stride)th a candidate ...")
        let seedStart = clock.now
        try await database.seedUsers(users: users, stride: stride, asOf: asOf, logger: logger)
        say("seeded in \(String(format: "%.1f", seconds(clock.now - seedStart))) s")
        let query = CandidateQuery(asOf: asOf)
        let report: String = try await database.withDatabase(logger: logger) { db, client in
            let countStart = clock.now
            let counted = try await db.candidates.countCandidates(query)
            let countSeconds = seconds(clock.now - countStart)

            let start = clock.now
            var streamed = 0
            var previous = ""
            var ordered = true
            var middle: String?
            for try await row in db.candidates.scan(query, pageSize: pageSize) {
                if row.id <= previous { ordered = false }
                previous = row.id
                streamed += 1
                if streamed == counted / 2 { middle = row.id }
            }
            let scanSeconds = seconds(clock.now - start)

            let plan = try await db.candidates.explainCandidateScan(query, pageSize: pageSize, after: middle, analyze: true)
            let oldPlan = try await explainSingleOr(client: client, asOf: asOf, after: middle, pageSize: pageSize, logger: logger)
            return """
                | users | candidates | page size | count(*) s | stream all s | candidates/s | in id order |
                | --- | --- | --- | --- | --- | --- | --- |
                | \(users) | \(streamed) (count said \(counted)) | \(pageSize) | \(f(countSeconds)) | \(f(scanSeconds)) \
                | \(Int(Double(streamed) / max(scanSeconds, 1e-9))) | \(ordered ? "yes" : "NO") |

                EXPLAIN (ANALYZE, BUFFERS) of the page after \(middle ?? "the start") (the scan's query):

                \(plan)

                For comparison, the same page as one `or` of the three rules (the scan before migration 2):

                \(oldPlan)
                """
        }
        print(report)
        if sweepDays > 0 {
            print(try await sweepReport(database: database, asOf: asOf, pageSize: pageSize, days: sweepDays, logger: logger))
        }
    }

    /// The nightly scan with the rolling sweep: tested inline on every page (an md5 per row each page walks) against
    /// recorded once per run (one pass over `users`, then the recorded candidates' primary key).
    static func sweepReport(database: BenchDatabase, asOf: Date, pageSize: Int, days: Int, logger: Logger) async throws -> String {
        let clock = ContinuousClock()
        return try await database.withDatabase(logger: logger) { db, _ in
            func stream(_ query: CandidateQuery) async throws -> (count: Int, seconds: Double, middle: String?) {
                let counted = try await db.candidates.countCandidates(query)
                let start = clock.now
                var streamed = 0
                var middle: String?
                for try await row in db.candidates.scan(query, pageSize: pageSize) {
                    streamed += 1
                    if streamed == counted / 2 { middle = row.id }
                }
                return (streamed, seconds(clock.now - start), middle)
            }
            let inline = CandidateQuery(asOf: asOf, sweepDays: days)
            let (inlineCount, inlineSeconds, inlineMiddle) = try await stream(inline)
            let runID = "bench-sweep-\(UInt32.random(in: 0...UInt32.max))"
            let recordStart = clock.now
            try await db.feeds.recordSweep(inline, runID: runID)
            let recordSeconds = seconds(clock.now - recordStart)
            let recorded = CandidateQuery(asOf: asOf, sweepDays: days, runCandidatesID: runID)
            let (recordedCount, recordedSeconds, _) = try await stream(recorded)
            let inlinePlan = try await db.candidates.explainCandidateScan(inline, pageSize: pageSize, after: inlineMiddle, analyze: true)
            let recordedPlan = try await db.candidates.explainCandidateScan(
                recorded, pageSize: pageSize, after: inlineMiddle, analyze: true)
            func lastLine(_ plan: String) -> String { plan.split(separator: "\n").last.map(String.init) ?? "" }
            return """

                Rolling sweep, D = \(days) (night \(CandidateQuery.sweepNight(asOf: asOf, days: days))):

                | sweep | candidates | record s | stream all s | one page (EXPLAIN ANALYZE) |
                | --- | --- | --- | --- | --- |
                | tested inline on every page | \(inlineCount) | — | \(f(inlineSeconds)) | \(lastLine(inlinePlan)) |
                | recorded once per run | \(recordedCount) | \(f(recordSeconds)) | \(f(recordedSeconds)) | \(lastLine(recordedPlan)) |

                EXPLAIN (ANALYZE, BUFFERS) of the recorded page:

                \(recordedPlan)
                """
        }
    }

    /// The page query as it was before the union: one `where (rule1 or rule2 or rule3)`.
    private static func explainSingleOr(
        client: PostgresClient, asOf: Date, after lastID: String?, pageSize: Int, logger: Logger
    ) async throws -> String {
        let since = asOf.addingTimeInterval(-60 * 86_400)
        let sql = """
            explain (analyze, buffers) select id, current_tier, subscription_status, subscription_end_date from users
            where ((current_tier > 0 and subscription_end_date < $1 and not coalesce(grace_period_ends_at > $1, false))
                or subscription_status = 'billing_issue'
                or (subscription_status in ('expired', 'canceled', 'refunded') and subscription_end_date >= $2))
            and id > $3 order by id limit $4
            """
        var binds = PostgresBindings()
        binds.append(asOf)
        binds.append(since)
        binds.append(lastID ?? "")
        binds.append(pageSize)
        var lines: [String] = []
        for try await line in try await client.query(PostgresQuery(unsafeSQL: sql, binds: binds), logger: logger).decode(String.self) {
            lines.append(line)
        }
        return lines.joined(separator: "\n")
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    static func f(_ value: Double) -> String { String(format: "%.3f", value) }
}
