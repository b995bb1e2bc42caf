import Foundation
import Logging
import PostgresNIO
import SubreconCore
import SubreconPorts

extension PostgresCandidates {

    /// One page of candidates with id greater than `lastID`, in id order, at most `limit` rows.
    public func candidatePage(_ query: CandidateQuery, after lastID: String?, limit: Int) async throws -> [UserRow] {
        try await run("candidate scan") {
            let rows = try await session.query(query.pageSQL(after: lastID, limit: limit, users: users), logger: logger)
            var page: [UserRow] = []
            for try await row in rows {
                var user = try UserRow(postgres: row, columns: users.identifierColumns)
                // The page's last column: why the row was selected (`CandidateQuery.reasons(stated:)`).
                let cells = row.makeRandomAccess()
                user.candidateReasons = query.reasons(stated: try cells[cells.count - 1].decode(String?.self))
                page.append(user)
            }
            return page
        }
    }

    /// The rows of `ids` within `shard`, whatever their tier, status or dates, in id order (an id no row has is
    /// absent): read in chunks of 1,000 ids, one statement each, decoded as a candidate page is (`UserRow.rowError`).
    public func rows(named ids: [String], shard: ShardSpec) async throws -> [UserRow] {
        let wanted = Array(Set(ids)).sorted()
        var rows: [UserRow] = []
        for start in stride(from: 0, to: wanted.count, by: 1_000) {
            let chunk = Array(wanted[start..<min(start + 1_000, wanted.count)])
            rows += try await run("read rows by id") {
                var binds = PostgresBindings()
                binds.append(chunk)
                let shardFilter = shard.sqlPredicate.map { " and \($0)" } ?? ""
                let query = PostgresQuery(
                    unsafeSQL:
                        "select \(CandidateQuery.userColumns(users)) from users where id = any($1::text[])\(shardFilter) order by id",
                    binds: binds)
                var page: [UserRow] = []
                for try await row in try await session.query(query, logger: logger) {
                    page.append(try UserRow(postgres: row, columns: users.identifierColumns))
                }
                return page
            }
        }
        return rows
    }

    /// Of `ids`, those no `users` row has, in the order given: one statement per 10,000 ids.
    public func unmatchedIDs(_ ids: [String]) async throws -> [String] {
        var unmatched: [String] = []
        for start in stride(from: 0, to: ids.count, by: 10_000) {
            let chunk = Array(ids[start..<min(start + 10_000, ids.count)])
            unmatched += try await run("match the users file") {
                var binds = PostgresBindings()
                binds.append(chunk)
                let query = PostgresQuery(
                    unsafeSQL: """
                        select t.x from unnest($1::text[]) with ordinality as t(x, n) \
                        where not exists (select 1 from users where users.id = t.x) order by t.n
                        """, binds: binds)
                var missing: [String] = []
                for try await id in try await session.query(query, logger: logger).decode(String.self) { missing.append(id) }
                return missing
            }
        }
        return unmatched
    }

    /// How many users the query selects now (a snapshot: the scan itself may see a few more or fewer).
    public func countCandidates(_ query: CandidateQuery) async throws -> Int {
        try await run("count candidates") {
            for try await count in try await session.query(query.countSQL(), logger: logger).decode(Int.self) {
                return count
            }
            return 0
        }
    }

    /// All candidates, streamed page by page in id order. Each page is a fresh keyset query, so rows added or
    /// changed during the scan are seen (when ahead of the cursor) or not (when behind it), never twice.
    public func scan(_ query: CandidateQuery, pageSize: Int = 500) -> CandidateSequence {
        CandidateSequence(candidates: self, query: query, pageSize: max(1, pageSize))
    }

    /// The `EXPLAIN` text of one candidate page (the page after `lastID`), for operators, tests and benchmarks.
    /// `analyze` runs the query and adds actual times and buffers.
    package func explainCandidateScan(
        _ query: CandidateQuery, pageSize: Int = 500, after lastID: String? = nil, analyze: Bool = false
    ) async throws -> String {
        try await run("explain candidate scan") {
            let page = query.pageSQL(after: lastID, limit: pageSize, users: users)
            let prefix = analyze ? "explain (analyze, buffers) " : "explain "
            let explain = PostgresQuery(unsafeSQL: prefix + page.sql, binds: page.binds)
            var lines: [String] = []
            for try await line in try await session.query(explain, logger: logger).decode(String.self) {
                lines.append(line)
            }
            return lines.joined(separator: "\n")
        }
    }
}

/// The candidates of a `CandidateQuery`, fetched one keyset page at a time as the consumer iterates.
public struct CandidateSequence: AsyncSequence, Sendable {
    public typealias Element = UserRow
    let candidates: PostgresCandidates
    let query: CandidateQuery
    let pageSize: Int

    public func makeAsyncIterator() -> Iterator {
        Iterator(candidates: candidates, query: query, pageSize: pageSize)
    }

    /// Holds at most one page in memory.
    public struct Iterator: AsyncIteratorProtocol {
        let candidates: PostgresCandidates
        let query: CandidateQuery
        let pageSize: Int
        var buffer: [UserRow] = []
        var position = 0
        var lastID: String?
        var finished = false

        public mutating func next() async throws -> UserRow? {
            if position == buffer.count {
                guard !finished else { return nil }
                buffer = try await candidates.candidatePage(query, after: lastID, limit: pageSize)
                position = 0
                if buffer.count < pageSize { finished = true }
                guard let last = buffer.last else { return nil }
                lastID = last.id
            }
            defer { position += 1 }
            return buffer[position]
        }
    }
}
