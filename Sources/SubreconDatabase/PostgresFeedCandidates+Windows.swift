import Foundation
import PostgresNIO
import SubreconCore
import SubreconPorts

/// The windows each store feed was read over (`reconcile_feed_windows`, CONTRACT "Hostile answers and bounded work"): one row per run and feed,
/// recorded before the feed is read (`complete` false) and marked complete only once the feed was read to its end
/// and its users recorded. A window counts as covered only when its run completed; a dry run records nothing.
extension PostgresFeedCandidates {
    /// This shard's attempts at `feed` that started before `asOf` and ended after `asOf - days` (in order of
    /// `since`), each `covered` when read to its end by a run that completed; nil when the feed was never attempted
    /// before `asOf` on this shard (`FeedWindowRule` falls back to the last completed nightly run).
    public func feedAttempts(feed: String, shard: ShardSpec, asOf: Date, days: Double) async throws -> [FeedAttempt]? {
        try await run("read feed windows") {
            var binds = PostgresBindings()
            binds.append(feed)
            binds.append(shard.index)
            binds.append(shard.count)
            binds.append(asOf)
            binds.append(asOf.addingTimeInterval(-days * 86_400))
            let rows = try await session.query(
                PostgresQuery(
                    unsafeSQL: """
                        select w.since, w.until, (w.complete and coalesce(r.status = 'completed', false)) \
                        from reconcile_feed_windows w left join reconcile_runs r on r.id = w.run_id \
                        where w.feed = $1 and w.shard_index = $2 and w.shard_count = $3 and w.since < $4 and w.until > $5 \
                        order by w.since, w.until
                        """, binds: binds), logger: logger)
            var attempts: [FeedAttempt] = []
            for try await (since, until, covered) in rows.decode((Date, Date, Bool).self) {
                attempts.append(FeedAttempt(since: since, until: until, covered: covered))
            }
            if !attempts.isEmpty { return attempts }
            let older = try await session.query(
                PostgresQuery(
                    unsafeSQL: """
                        select exists (select 1 from reconcile_feed_windows \
                        where feed = $1 and shard_index = $2 and shard_count = $3 and since < $4)
                        """, binds: binds), logger: logger)
            for try await any in older.decode(Bool.self) { return any ? [] : nil }
            return nil
        }
    }

    /// Records that `runID` starts reading `feed` over `[since, until)` on this shard: not covered until
    /// `completeFeedWindow` (a read that fails or is interrupted stays uncovered).
    public func beginFeedWindow(runID: String, feed: String, shard: ShardSpec, since: Date, until: Date) async throws {
        try await run("record feed window") {
            var binds = PostgresBindings()
            binds.append(runID)
            binds.append(feed)
            binds.append(shard.index)
            binds.append(shard.count)
            binds.append(since)
            binds.append(max(since, until))
            try await session.query(
                PostgresQuery(
                    unsafeSQL: """
                        insert into reconcile_feed_windows (run_id, feed, shard_index, shard_count, since, until) \
                        values ($1, $2, $3, $4, $5, $6) on conflict (run_id, feed) do update set \
                        since = excluded.since, until = excluded.until, complete = false, read_at = null
                        """, binds: binds), logger: logger)
        }
    }

    /// Marks `runID`'s window of `feed` as read to its end (covered once the run completes).
    public func completeFeedWindow(runID: String, feed: String) async throws {
        try await run("complete feed window") {
            var binds = PostgresBindings()
            binds.append(runID)
            binds.append(feed)
            try await session.query(
                PostgresQuery(
                    unsafeSQL: "update reconcile_feed_windows set complete = true, read_at = now() where run_id = $1 and feed = $2",
                    binds: binds), logger: logger)
        }
    }
}
