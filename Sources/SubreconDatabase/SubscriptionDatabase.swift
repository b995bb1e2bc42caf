import Foundation
import Logging
import PostgresNIO
import SubreconCore
import SubreconPorts

/// subrecon's access to PostgreSQL: candidate scan, applying verdicts, runs, the product catalog, shard locks.
///
/// Owns no connections: the caller creates the `PostgresClient` (from `DatabaseSettings.clientConfiguration()`)
/// and keeps its `run()` going in a task for as long as the database is used. Tables are addressed unqualified, so
/// they live in the connection's current schema (`search_path`). Every failure is thrown as a `DatabaseError`.
public struct SubscriptionDatabase: Sendable {
    public let client: PostgresClient
    public let logger: Logger
    /// The pool as the database adapter uses it: each unit of work one transaction, opened with the session's settings
    /// (`SessionSetup`).
    let session: SessionPool
    /// How `users` is read and written: subrecon's own table unless `with(users:)` says otherwise (an app's relation,
    /// detected once per run by `checkUsers`); `account_token` is read and written only once `checkUsers` found it.
    public internal(set) var users: UsersRelation

    /// - Parameter identifierColumns: the stores' identifier columns in `users` (their adapters declare them: the
    ///   composition root's registry), read into `UserRow.identifiers`.
    /// - Parameter session: what each transaction on `client`'s connections gets first (`DatabaseSettings.session`);
    ///   nil when the client's connections carry it as startup parameters (`clientConfiguration(direct: true)`).
    public init(client: PostgresClient, logger: Logger, identifierColumns: [IdentifierColumn] = [], session: SessionSetup? = nil) {
        self.client = client
        self.logger = logger
        self.session = SessionPool(client: client, setup: session)
        // Until `checkUsers` says so (`with(users:)`), the optional `account_token` is not assumed: an app's relation
        // may lack it.
        users = UsersRelation(
            isTable: true, optionalColumns: Set(identifierColumns.map(\.name)), identifierColumns: identifierColumns)
    }

    /// Opens one connection with `settings` and runs one transaction with the session's settings (`SessionSetup`: a
    /// transaction not in the schema asked for is `DatabaseError.schemaNotCurrent`, exit 78), so an unreachable
    /// database is reported at start (`DatabaseError.unreachable` → exit 69) instead of after the pool's retries.
    /// Needs no running client.
    public static func checkReachable(_ settings: DatabaseSettings, logger: Logger) async throws(DatabaseError) {
        let configuration: PostgresConnection.Configuration
        do {
            configuration = try settings.connectionConfiguration()
        } catch {
            throw .rejected(endpoint: settings.endpoint, reason: "cannot set up TLS for sslmode=\(settings.sslMode.rawValue)")
        }
        do {
            let connection = try await PostgresConnection.connect(configuration: configuration, id: 0, logger: logger)
            do {
                try await connection.inTransaction(session: settings.session, logger: logger) { _ in }
            } catch {
                try? await connection.close()
                throw error
            }
            try? await connection.close()
        } catch {
            // A refused chain is read once more to name the cause (docs/CONTRACT.md, "The session").
            if let refusal = CertificateRefusal.refusal(in: error, host: settings.host ?? "", trusted: settings.sslRootCertificatePath) {
                let cause = await CertificateRefusal.diagnosed(refusal, settings: settings).cause
                throw .certificateRefused(endpoint: settings.endpoint, cause: cause)
            }
            let wrapped = DatabaseError.wrap(error, operation: "connect", endpoint: settings.endpoint, settings: settings)
            if case .database(_, let reason) = wrapped {
                throw .unreachable(endpoint: settings.endpoint, reason: reason)
            }
            throw wrapped
        }
    }

    /// Creates or upgrades the schema (`subrecon migrate`); returns the versions applied now. An app's own `users`
    /// lacking a contract column (or `requiredOptional`, the optional ones whose source is configured) throws
    /// `UsersContract.Violation` and nothing is created.
    @discardableResult
    /// On a server that takes no writes, a migration that has work to do is `DatabaseError.readOnly` naming why (a
    /// hot standby, read-only sessions): exit 69, never 75 (docs/CONTRACT.md, "What `run` checks first").
    public func migrate(_ migrator: SchemaMigrator = SchemaMigrator(), requiring requiredOptional: Set<String> = []) async throws -> [Int] {
        do {
            return try await migrator.migrate(client: session, logger: logger, requiring: requiredOptional)
        } catch DatabaseError.readOnly(let operation, let reason) {
            throw DatabaseError.readOnly(operation: operation, reason: (try? await readOnlyState()) ?? reason)
        }
    }

    /// Throws `DatabaseError.schemaMissing` / `.schemaOutdated` unless `subrecon migrate` has run for this build.
    public func requireSchema(_ migrator: SchemaMigrator = SchemaMigrator()) async throws {
        try await migrator.requireCurrent(client: session, logger: logger)
    }

    // MARK: Candidates

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
    public func candidates(_ query: CandidateQuery, pageSize: Int = 500) -> CandidateSequence {
        CandidateSequence(database: self, query: query, pageSize: max(1, pageSize))
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

    /// The row of one user, or nil.
    package func user(id: String) async throws -> UserRow? {
        try await run("read user") {
            let sql = "select \(CandidateQuery.userColumns(users)) from users where id = $1"
            var binds = PostgresBindings()
            binds.append(id)
            for try await row in try await session.query(PostgresQuery(unsafeSQL: sql, binds: binds), logger: logger) {
                return try UserRow(postgres: row, columns: users.identifierColumns)
            }
            return nil
        }
    }

    // MARK: Seeding

    /// Inserts users (tests, `subrecon demo`). `updatedAtMicros == 0` means `now()`; any other value is stored
    /// exactly. Fails on an existing id.
    package func insertUsers(_ users: [UserRow]) async throws {
        let identifiers = self.users.identifierColumns
        let account = self.users.hasAccountToken
        let columns = 10 + identifiers.count + (account ? 1 : 0)
        for chunk in stride(from: 0, to: users.count, by: 1000).map({ users[$0..<min($0 + 1000, users.count)] }) {
            var binds = PostgresBindings(capacity: chunk.count * columns)
            var tuples: [String] = []
            for user in chunk {
                let base = binds.count
                binds.append(user.id)
                binds.append(user.currentTier)
                binds.append(user.statusText)
                binds.append(user.endDate.map(Timestamp.init))
                binds.append(user.graceEndsAt.map(Timestamp.init))
                binds.append(user.source)
                binds.append(user.productID)
                binds.append(user.originalTransactionID)
                binds.append(user.autoRenew)
                binds.append(user.updatedAtMicros)
                for column in identifiers { binds.append(user.identifiers[column.origin]) }
                if account { binds.append(user.accountToken) }
                let p: [String] = (1...columns).map { "$\(base + $0)" }
                let first: String = p[0...8].joined(separator: ", ")
                let updated: String = "coalesce(timestamptz 'epoch' + nullif(\(p[9])::bigint, 0) * interval '1 microsecond', now())"
                let rest: String = p[10...].map { ", " + $0 }.joined()
                tuples.append("(" + first + ", " + updated + rest + ")")
            }
            let sql = """
                insert into users (id, current_tier, subscription_status, subscription_end_date, grace_period_ends_at, \
                subscription_source, iap_product_id, iap_original_transaction_id, auto_renew, updated_at\
                \(identifiers.map { ", " + $0.name }.joined())\(account ? ", account_token" : "")) values \
                \(tuples.joined(separator: ", "))
                """
            try await run("insert users") {
                try await session.query(PostgresQuery(unsafeSQL: sql, binds: binds), logger: logger)
            }
        }
    }

    // MARK: Product catalog

    /// The whole `product_tiers` table.
    public func loadCatalog() async throws -> ProductCatalog {
        try await run("load product catalog") {
            var entries: [ProductCatalog.Entry] = []
            let rows = try await session.query(
                "select product_id, tier, entitlement from product_tiers order by product_id", logger: logger)
            for try await (product, tier, entitlement) in rows.decode((String, Int, String?).self) {
                entries.append(.init(productID: product, tier: tier, entitlement: entitlement))
            }
            return ProductCatalog(entries)
        }
    }

    /// Inserts or replaces catalog entries by product id, in one transaction; with `replacing`, the entries become the
    /// whole table (every other row deleted in the same transaction).
    public func upsertProducts(_ entries: [ProductCatalog.Entry], replacing: Bool = false) async throws {
        try await run("upsert products") {
            try await session.withTransaction { connection in
                if replacing { try await connection.run("delete from product_tiers", logger: logger) }
                for entry in entries {
                    try await connection.run(
                        """
                        insert into product_tiers (product_id, tier, entitlement) \
                        values (\(entry.productID), \(entry.tier), \(entry.entitlement)) \
                        on conflict (product_id) do update set tier = excluded.tier, entitlement = excluded.entitlement
                        """, logger: logger)
                }
            }
        }
    }

    /// Runs `body`, mapping any error to a `DatabaseError` for `operation`.
    @discardableResult
    func run<T>(_ operation: String, _ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch {
            throw DatabaseError.wrap(error, operation: operation)
        }
    }
}

/// The candidates of a `CandidateQuery`, fetched one keyset page at a time as the consumer iterates.
public struct CandidateSequence: AsyncSequence, Sendable {
    public typealias Element = UserRow
    let database: SubscriptionDatabase
    let query: CandidateQuery
    let pageSize: Int

    public func makeAsyncIterator() -> Iterator {
        Iterator(database: database, query: query, pageSize: pageSize)
    }

    /// Holds at most one page in memory.
    public struct Iterator: AsyncIteratorProtocol {
        let database: SubscriptionDatabase
        let query: CandidateQuery
        let pageSize: Int
        var buffer: [UserRow] = []
        var position = 0
        var lastID: String?
        var finished = false

        public mutating func next() async throws -> UserRow? {
            if position == buffer.count {
                guard !finished else { return nil }
                buffer = try await database.candidatePage(query, after: lastID, limit: pageSize)
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
