import Foundation
import Logging
import PostgresNIO
import SubreconCore
import SubreconPorts

extension SubscriptionDatabase {
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
                        id: id, mode: CandidateQuery.Mode(rawValue: mode) ?? .nightly, asOf: roundedToMicros(asOf),
                        shard: try ShardSpec.stored(index: index, count: count), dryRun: dryRun,
                        status: RunStatus(rawValue: status) ?? .failed, startedAt: roundedToMicros(started),
                        finishedAt: finished.map(roundedToMicros),
                        counts: (try? decoder.decode([String: Int].self, from: Data(counts.utf8))) ?? [:],
                        options: (try? decoder.decode([String: String].self, from: Data(options.utf8))) ?? [:]))
            }
            return records
        }
    }

    /// Runs `body` while holding the advisory locks of `shard` (`ShardLock`: overlapping layouts exclude each
    /// other), on one pooled connection leased for the whole body (the body's own queries use other connections).
    /// Returns nil at once, without running `body`, when another session holds this shard or one overlapping it.
    /// `subrecon run` uses `ShardLock.withLock`, which holds the lock on a dedicated connection and watches it.
    package func withShardLock<T: Sendable>(shard: ShardSpec, _ body: () async throws -> T) async throws -> T? {
        do {
            return try await session.withLease { connection -> T? in
                guard try await ShardLock.take(shard, on: connection, session: session.setup, logger: logger) else { return nil }
                logger.debug("took shard lock", metadata: ["shard": "\(shard)"])
                do {
                    let value = try await body()
                    try await connection.run(ShardLock.unlock, logger: logger)
                    return value
                } catch {
                    _ = try? await connection.run(ShardLock.unlock, logger: logger)
                    throw error
                }
            }
        } catch let error as DatabaseError {
            throw error
        } catch let error as PSQLError {
            throw DatabaseError.wrap(error, operation: "shard lock")
        }
    }

    static func json(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return SourceText.jsonbText(try encoder.encode(value))
    }
}
