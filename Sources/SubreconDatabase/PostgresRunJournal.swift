import Foundation
import Logging
import PostgresNIO
import SubreconCore
import SubreconPorts

extension PostgresRunJournal {
    /// Inserts the run's row (normally with status `running`).
    public func startRun(_ record: RunRecord) async throws {
        let counts = try Self.json(record.counts)
        let options = try Self.json(record.options)
        try await run("start run") {
            try await session.query(
                """
                insert into reconcile_runs (id, mode, as_of, shard_index, shard_count, dry_run, status, started_at, \
                finished_at, counts, options) values (\(record.id), \(record.mode.rawValue), \(Timestamp(record.asOf)), \
                \(record.shard.index), \(record.shard.count), \(record.dryRun), \(record.status.rawValue), \
                \(Timestamp(record.startedAt)), \(record.finishedAt.map(Timestamp.init)), \(counts)::jsonb, \
                \(options)::jsonb)
                """, logger: logger)
        }
    }

    /// Records the run's outcome and counts.
    public func finishRun(id: String, status: RunStatus, counts: [String: Int], finishedAt: Date) async throws {
        let counts = try Self.json(counts)
        try await run("finish run") {
            try await session.query(
                """
                update reconcile_runs set status = \(status.rawValue), counts = \(counts)::jsonb, \
                finished_at = \(Timestamp(finishedAt)) where id = \(id)
                """, logger: logger)
        }
    }

    /// Records the run's outcome with a JSON object (e.g. the run summary) stored as its `counts`.
    /// - Throws: `DatabaseError.database` when `summary` is not a JSON object.
    public func finishRun(id: String, status: RunStatus, summary: Data, finishedAt: Date) async throws {
        guard (try? JSONSerialization.jsonObject(with: summary)) is [String: Any] else {
            throw DatabaseError.database(operation: "finish run", reason: "the run summary is not a JSON object")
        }
        let json = SourceText.jsonbText(summary)
        try await run("finish run") {
            try await session.query(
                """
                update reconcile_runs set status = \(status.rawValue), counts = \(json)::jsonb, \
                finished_at = \(Timestamp(finishedAt)) where id = \(id)
                """, logger: logger)
        }
    }

    /// Stores the run's candidate selection (JSON) so `--resume` asks for the same candidates.
    public func recordSelection(runID: String, selection: Data) async throws {
        let text = String(decoding: selection, as: UTF8.self)
        try await run("record selection") {
            try await session.query("update reconcile_runs set selection = \(text)::jsonb where id = \(runID)", logger: logger)
        }
    }

    /// A run's record, selection and progress.
    public func storedRun(id: String) async throws -> StoredRun? {
        try await run("read run") {
            let rows = try await session.query(
                """
                select id, mode, as_of, shard_index, shard_count, dry_run, status, started_at, finished_at, \
                selection::text, validated, scan_cursor, scan_done, held_tier, would_lose_tier, user_errors, counts::text \
                from reconcile_runs where id = \(id)
                """, logger: logger)
            for try await row in rows {
                let r = try row.decode(
                    (String, String, Date, Int, Int, Bool, String, Date, Date?, String?, Int64, String?, Bool, Int, Int, Int, String?).self)
                var progress = RunProgress()
                progress.validated = r.10
                progress.scanCursor = r.11
                progress.scanDone = r.12
                progress.heldTier = r.13
                progress.wouldLoseTier = r.14
                progress.userErrors = r.15
                let record = RunRecord(
                    id: r.0, mode: try Self.runMode(r.1), asOf: r.2,
                    shard: try ShardSpec.stored(index: r.3, count: r.4), dryRun: r.5, status: try Self.runStatus(r.6),
                    startedAt: r.7, finishedAt: r.8)
                return StoredRun(
                    record: record, selection: r.9.map { Data($0.utf8) }, progress: progress, summary: r.16.map { Data($0.utf8) })
            }
            return nil
        }
    }

    /// Sets a run's status (e.g. back to `running` when resumed).
    public func setRunStatus(id: String, _ status: RunStatus) async throws {
        try await run("update run") {
            try await session.query(
                "update reconcile_runs set status = \(status.rawValue), finished_at = null where id = \(id)", logger: logger)
        }
    }

    /// The `counts` JSON of one run as stored (the summary when finished with `summary:`), or nil.
    package func runCountsJSON(id: String) async throws -> Data? {
        try await run("read run") {
            let rows = try await session.query("select counts::text from reconcile_runs where id = \(id)", logger: logger)
            for try await text in rows.decode(String.self) { return Data(text.utf8) }
            return nil
        }
    }

    /// The latest runs, newest first.
    package func recentRuns(limit: Int = 20) async throws -> [RunRecord] {
        try await run("read runs") {
            let rows = try await session.query(
                """
                select id, mode, as_of, shard_index, shard_count, dry_run, status, started_at, finished_at, \
                counts::text, options::text from reconcile_runs order by started_at desc, id desc limit \(max(1, limit))
                """, logger: logger)
            var records: [RunRecord] = []
            for try await (id, mode, asOf, index, count, dryRun, status, started, finished, counts, options) in rows.decode(
                (String, String, Date, Int, Int, Bool, String, Date, Date?, String, String).self)
            {
                let decoder = JSONDecoder()
                records.append(
                    RunRecord(
                        id: id, mode: try Self.runMode(mode), asOf: roundedToMicros(asOf),
                        shard: try ShardSpec.stored(index: index, count: count), dryRun: dryRun,
                        status: try Self.runStatus(status), startedAt: roundedToMicros(started),
                        finishedAt: finished.map(roundedToMicros),
                        counts: (try? decoder.decode([String: Int].self, from: Data(counts.utf8))) ?? [:],
                        options: (try? decoder.decode([String: String].self, from: Data(options.utf8))) ?? [:]))
            }
            return records
        }
    }
}
