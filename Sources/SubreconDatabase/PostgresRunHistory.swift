import Foundation
import Logging
import PostgresNIO
import SubreconCore
import SubreconPorts

extension PostgresRunHistory {
    /// The latest runs of `shard` (all shards when nil), newest first, with their stored summary JSON.
    public func recentRunSummaries(shard: ShardSpec?, limit: Int = 30) async throws -> [RunHistoryEntry] {
        try await run("read run history") {
            let rows: CollectedRows
            if let shard {
                rows = try await session.query(
                    """
                    select id, status, started_at, finished_at, counts::text from reconcile_runs \
                    where shard_index = \(shard.index) and shard_count = \(shard.count) \
                    order by started_at desc, id desc limit \(max(1, limit))
                    """, logger: logger)
            } else {
                rows = try await session.query(
                    """
                    select id, status, started_at, finished_at, counts::text from reconcile_runs \
                    order by started_at desc, id desc limit \(max(1, limit))
                    """, logger: logger)
            }
            return try await Self.entries(rows)
        }
    }

    /// The latest runs of `shard` that started before `instant`, newest first, with their stored summary JSON: the
    /// history of a run that kept none (`report RUN_ID` of a run older than `reconcile_run_reports`).
    public func runSummaries(shard: ShardSpec, startedBefore instant: Date, limit: Int) async throws -> [RunHistoryEntry] {
        try await run("read run history") {
            let rows: CollectedRows = try await session.query(
                """
                select id, status, started_at, finished_at, counts::text from reconcile_runs \
                where shard_index = \(shard.index) and shard_count = \(shard.count) and started_at < \(instant) \
                order by started_at desc, id desc limit \(max(1, limit))
                """, logger: logger)
            return try await Self.entries(rows)
        }
    }

    /// `(id, status, started_at, finished_at, counts)` rows as history entries, in the order read.
    private static func entries(_ rows: CollectedRows) async throws -> [RunHistoryEntry] {
        var runs: [RunHistoryEntry] = []
        for try await (id, status, started, finished, counts) in rows.decode((String, String, Date, Date?, String).self) {
            runs.append(
                RunHistoryEntry(
                    id: id, status: try Self.runStatus(status), startedAt: started, finishedAt: finished,
                    countsJSON: Data(counts.utf8)))
        }
        return runs
    }
}
