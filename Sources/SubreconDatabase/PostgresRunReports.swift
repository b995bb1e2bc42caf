import Foundation
import PostgresNIO
import SubreconCore
import SubreconPorts

extension PostgresRunReports {
    /// Keeps, with run `runID`, the report inputs later nights move (`reconcile_run_reports`, by file name): the
    /// night's `orphans.csv` and `refund_review.csv` as written (`reconcile_orphans` and `refunds_seen` move on) and
    /// the history its charts showed, so `subrecon report RUN_ID` renders the folder as the run wrote it
    /// (docs/CONTRACT.md, "Reports"). A resumed run replaces what its earlier attempt kept.
    public func recordRunReports(runID: String, _ files: [String: String]) async throws {
        guard !files.isEmpty else { return }
        let names = files.keys.sorted()
        let contents = names.map { files[$0] ?? "" }
        try await run("record run reports") {
            try await session.query(
                """
                insert into reconcile_run_reports (run_id, name, content) \
                select \(runID), n, c from unnest(\(names)::text[], \(contents)::text[]) as x(n, c) \
                on conflict (run_id, name) do update set content = excluded.content
                """, logger: logger)
        }
    }

    /// What `recordRunReports` kept for run `runID`, by file name; empty for a run that kept nothing (one that
    /// predates the table, a dry run).
    public func runReports(runID: String) async throws -> [String: String] {
        try await run("read run reports") {
            var files: [String: String] = [:]
            let rows = try await session.query(
                "select name, content from reconcile_run_reports where run_id = \(runID)", logger: logger)
            for try await (name, content) in rows.decode((String, String).self) { files[name] = content }
            return files
        }
    }
}
