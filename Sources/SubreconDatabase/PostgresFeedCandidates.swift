import Foundation
import PostgresNIO
import SubreconCore
import SubreconPorts

extension PostgresFeedCandidates {
    /// Adds the users whose `column` holds one of `identifiers` as candidates of `runID` for `reason` (idempotent:
    /// a resumed run adds nothing twice). An app's `users` without the column matches nothing.
    public func addFeedCandidates(
        runID: String, column: FeedColumn, identifiers: [String], reason: CandidateReason, freeOnly: Bool = false
    ) async throws -> FeedMatch {
        let distinct = Self.held(identifiers)
        guard !distinct.isEmpty else { return FeedMatch(users: 0, unmatched: 0) }
        if !users.canMatch(column) {
            return FeedMatch(users: 0, unmatched: distinct.count)
        }
        return try await run("add feed candidates") {
            var binds = PostgresBindings()
            binds.append(runID)
            binds.append(reason.rawValue)
            binds.append(distinct)
            let sql = """
                with named as (select id from users where \(column.rawValue) = any($3)\(freeOnly ? " and current_tier = 0" : "")), \
                added as (insert into reconcile_run_candidates (run_id, user_id, reasons) \
                select $1, id, array[$2::text] from named on conflict (run_id, user_id) do update set reasons = \
                case when $2::text = any(reconcile_run_candidates.reasons) then reconcile_run_candidates.reasons \
                else reconcile_run_candidates.reasons || array[$2::text] end) \
                select (select count(*) from named)::int, \
                (select count(*) from unnest($3::text[]) as x(v) \
                where not exists (select 1 from users where \(column.rawValue) = x.v))::int
                """
            for try await (named, unmatched) in try await session.query(PostgresQuery(unsafeSQL: sql, binds: binds), logger: logger)
                .decode((Int, Int).self)
            {
                return FeedMatch(users: named, unmatched: unmatched)
            }
            return FeedMatch(users: 0, unmatched: distinct.count)
        }
    }

    /// The users whose `column` holds one of `identifiers`, and how many distinct identifiers match no row; writes
    /// nothing (a dry run keeps its feed candidates in memory: bounded by the feeds' size).
    public func feedUsers(
        column: FeedColumn, identifiers: [String], freeOnly: Bool = false
    ) async throws -> (users: [String], unmatched: Int) {
        let distinct = Self.held(identifiers)
        guard !distinct.isEmpty else { return ([], 0) }
        if !users.canMatch(column) {
            return ([], distinct.count)
        }
        return try await run("read feed users") {
            var binds = PostgresBindings()
            binds.append(distinct)
            var ids: [String] = []
            var matched = Set<String>()
            let rows = try await session.query(
                PostgresQuery(
                    unsafeSQL: "select id, \(column.rawValue), current_tier from users where \(column.rawValue) = any($1) order by id",
                    binds: binds), logger: logger)
            for try await (id, value, tier) in rows.decode((String, String, Int).self) {
                if !freeOnly || tier == 0 { ids.append(id) }
                matched.insert(value)
            }
            return (ids, distinct.count - matched.count)
        }
    }

    /// The user ids whose `column` holds each of `identifiers` (identifiers matching no row are absent; ids sorted),
    /// read only: the feeds' refunds are recorded for these users (CONTRACT "Finance figures"). An app's `users` without the column
    /// matches nothing, as in `feedUsers`.
    public func feedUserIDs(column: FeedColumn, identifiers: [String]) async throws -> [String: [String]] {
        let distinct = Self.held(identifiers)
        guard !distinct.isEmpty else { return [:] }
        if !users.canMatch(column) { return [:] }
        return try await run("read feed user ids") {
            var binds = PostgresBindings()
            binds.append(distinct)
            var found: [String: [String]] = [:]
            let rows = try await session.query(
                PostgresQuery(
                    unsafeSQL: "select id, \(column.rawValue) from users where \(column.rawValue) = any($1) order by id",
                    binds: binds), logger: logger)
            for try await (id, value) in rows.decode((String, String).self) {
                found[value, default: []].append(id)
            }
            return found
        }
    }

    /// Records tonight's sweep shares of this shard's rows (tier holders, and rows without a tier) as candidates of `runID` (idempotent: a resumed
    /// run records the same users). One pass over `users` a night, instead of a hash per row on every page.
    public func recordSweep(_ query: CandidateQuery, runID: String) async throws {
        let statements = query.sweepInsertSQL(runID: runID)
        guard !statements.isEmpty else { return }
        try await run("record sweep candidates") {
            for sql in statements { try await session.query(sql, logger: logger) }
            // Fresh statistics, so each page walks the recorded candidates' primary key in order and stops at the
            // page size (stale ones make the planner gather and sort every candidate after the cursor, per page).
            try await session.query("analyze reconcile_run_candidates", logger: logger)
        }
    }

    /// When this shard's last completed (not dry) nightly run started, if any: the default start of the feeds' window.
    public func lastCompletedNightlyStart(shard: ShardSpec) async throws -> Date? {
        try await run("read last completed run") {
            let rows = try await session.query(
                """
                select max(started_at) from reconcile_runs \
                where status = 'completed' and mode = 'nightly' and not dry_run \
                and shard_index = \(shard.index) and shard_count = \(shard.count)
                """, logger: logger)
            for try await started in rows.decode(Date?.self) { return started }
            return nil
        }
    }
}
