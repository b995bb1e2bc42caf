import Foundation
import Logging
import PostgresNIO

/// Migrations on subrecon's own `users` once it holds the app's rows (docs/CONTRACT.md, "Database"): the app's
/// webhooks write it all night, so nothing here makes their UPDATEs wait longer than a moment.
///
/// - An `ALTER TABLE users` (a new nullable column: a catalog change) takes its lock in a transaction of its own that
///   waits `liveAlterLockWait` for it, never longer, and commits at once; turned away, it tries again after a pause,
///   up to `liveAlterAttempts` times.
/// - An index is built `CREATE INDEX CONCURRENTLY`, outside any transaction: its lock on `users` (SHARE UPDATE
///   EXCLUSIVE) lets every INSERT, UPDATE and DELETE through. An index of that name an interrupted build left invalid
///   (`pg_index.indisvalid = false`) is dropped `DROP INDEX CONCURRENTLY` and built again. A statement outside a
///   transaction cannot carry the job's transaction-local timeouts ("The session"), and a `SET` would stay on a
///   server connection a transaction pooler then hands the app: the build is bounded from the client instead
///   (`indexBuildTimeout`), and cancelled on the server (`pg_cancel_backend`, from the lock's connection) when it
///   runs over. Names are qualified with the schema: outside a transaction the session's `search_path` is not set.
/// - The migration is recorded only after its indexes are valid.
extension SchemaMigrator {
    /// How long an `ALTER TABLE users` waits for its lock per attempt (the app's statements wait behind it that long
    /// at most), how many attempts, and the pause between them.
    static let liveAlterLockWait = "2s"
    static let liveAlterAttempts = 30
    static let liveAlterPause = Duration.seconds(2)

    /// The bound of one concurrent build or drop, and of the wait for another migrator's lock; nil: none.
    func indexBuildBound(_ client: SessionPool) -> Duration? {
        if let indexBuildTimeout { return indexBuildTimeout }
        let statement = client.setup?.timeouts.statement ?? .zero
        guard client.setup == nil || statement > .zero else { return nil }
        return max(.seconds(600), statement)
    }

    /// Runs `body` holding the migration lock (`takeMigrationLock`) on a leased connection, whose transaction stays
    /// open until `body` ends; `body` gets that connection to cancel a build that overran (`boundedConcurrently`).
    func withMigrationLock<T: Sendable>(
        isolation: isolated (any Actor)? = #isolation, client: SessionPool, logger: Logger,
        _ body: (PostgresConnection) async throws -> T
    ) async throws -> T {
        let wait = indexBuildBound(client)
        return try await client.withLease { lock in
            try await Self.takeMigrationLock(on: lock, session: client.setup, waiting: wait, logger: logger)
            do {
                let value = try await body(lock)
                try await lock.run("rollback", logger: logger)
                return value
            } catch {
                await Self.rollBack(lock, logger: logger)
                throw error
            }
        }
    }

    /// Takes the migration lock: a transaction-scoped advisory lock keyed by `current_schema()` (the key every
    /// release takes) in a read committed transaction left open, which touches no table and, once the lock is
    /// taken, holds no snapshot (its last statement needs none), so a concurrent index build on another connection
    /// does not wait for it; behind a transaction pooler it keeps its server connection, as the shard lock's does
    /// ("Applying"). Its idle and statement timeouts are off. Another migrator's lock is waited for by trying again
    /// every half second, each try a transaction of its own: a migrator blocked inside a statement would hold a
    /// snapshot the other's build waits for, and each would wait for the other. Gives up after `waiting`.
    static func takeMigrationLock(
        on lock: PostgresConnection, session: SessionSetup?, waiting: Duration?, logger: Logger
    ) async throws {
        let clock = ContinuousClock()
        let start = clock.now
        while true {
            try await lock.run(PostgresConnection.beginReadCommitted, logger: logger)
            var taken = false
            do {
                try await lock.applyLocally(
                    session, overriding: ["statement_timeout": "0", "idle_in_transaction_session_timeout": "0"], logger: logger)
                try await lock.run(ShardLock.noTransactionTimeout, logger: logger)
                let rows = try await lock.run(
                    "select pg_try_advisory_xact_lock(hashtext('subrecon.migrate'), hashtext(current_schema()))", logger: logger)
                for try await flag in rows.decode(Bool.self) { taken = flag }
                // The extended protocol keeps a SELECT's portal, and its snapshot, until the next statement: a
                // concurrent build would wait for that snapshot forever. SHOW needs none, and replaces it.
                try await lock.run("show transaction_isolation", logger: logger)
                if taken { return }
                try await lock.run("rollback", logger: logger)
            } catch {
                await rollBack(lock, logger: logger)
                throw error
            }
            if let waiting, clock.now - start >= waiting {
                throw DatabaseError.database(
                    operation: "migrate", reason: "another subrecon migrate of this schema held its lock for longer than \(waiting)")
            }
            if clock.now - start < .milliseconds(500) {
                logger.notice("another subrecon migrate of this schema is running; waiting for it")
            }
            try await Task.sleep(for: .milliseconds(500))
        }
    }

    /// Ends the lock's transaction; a connection that cannot end it is closed, never handed back inside it.
    static func rollBack(_ lock: PostgresConnection, logger: Logger) async {
        do {
            try await lock.run("rollback", logger: logger)
        } catch {
            try? await lock.close()
        }
    }

    /// One deferred migration (`InlinePlan.deferred`): its `ALTER TABLE users`, its indexes built concurrently, then
    /// its own statements and its version in one transaction.
    func applyOnLiveUsers(
        _ migration: SchemaMigration, schema: String, lock: PostgresConnection, client: SessionPool, logger: Logger
    ) async throws {
        if !migration.ownUsersStatements.isEmpty {
            try await Self.alterLiveUsers(migration.ownUsersStatements, client: client, logger: logger)
        }
        for index in migration.usersIndexes {
            try await buildConcurrently(index, schema: schema, lock: lock, client: client, logger: logger)
        }
        try await client.withTransaction(overriding: Self.transactionWaits) { connection in
            try await Self.apply(migration, toUsers: false, on: connection, logger: logger)
        }
    }

    /// `statements` on `users` in one transaction that waits `liveAlterLockWait` for its lock, again after a pause
    /// when turned away (SQLSTATE 55P03), up to `liveAlterAttempts` times.
    static func alterLiveUsers(_ statements: [String], client: SessionPool, logger: Logger) async throws {
        var attempt = 1
        while true {
            do {
                try await client.withTransaction(overriding: ["lock_timeout": liveAlterLockWait]) { connection in
                    for statement in statements {
                        try await connection.run(PostgresQuery(unsafeSQL: statement), logger: logger)
                    }
                }
                return
            } catch let error as PSQLError where error.serverInfo?[.sqlState] == "55P03" && attempt < liveAlterAttempts {
                logger.notice(
                    "users is held by other transactions; altering it again shortly",
                    metadata: ["db.migration.attempt": "\(attempt)"])
                attempt += 1
                try await Task.sleep(for: liveAlterPause)
            }
        }
    }

    /// `index` on `schema.users`, built concurrently unless a valid index of its name is there; an invalid one is
    /// dropped concurrently first. Throws unless the index is valid afterwards.
    func buildConcurrently(
        _ index: UsersIndex, schema: String, lock: PostgresConnection, client: SessionPool, logger: Logger
    ) async throws {
        let qualified = "\(schema).\(index.name)"
        let metadata: Logger.Metadata = ["db.index": "\(index.name)"]
        switch try await Self.indexValidity(qualified, client: client, logger: logger) {
        case true?:
            return
        case false?:
            logger.warning("dropping the invalid index an interrupted build left, to build it again", metadata: metadata)
            try await boundedConcurrently(
                "drop index concurrently if exists \(qualified)", lock: lock, client: client, logger: logger)
        case nil:
            break
        }
        logger.info("building index on users concurrently", metadata: metadata)
        try await boundedConcurrently(
            index.sql(on: "\(schema).users", concurrently: true), lock: lock, client: client, logger: logger)
        guard try await Self.indexValidity(qualified, client: client, logger: logger) == true else {
            throw DatabaseError.database(
                operation: "migrate", reason: "index \(index.name) on users is not valid after it was built concurrently")
        }
    }

    /// `pg_index.indisvalid` of the index `qualified`; nil when there is no index of that name.
    static func indexValidity(_ qualified: String, client: SessionPool, logger: Logger) async throws -> Bool? {
        try await client.withTransaction { connection in
            var valid: Bool?
            let rows = try await connection.run(
                "select indisvalid from pg_index where indexrelid = to_regclass(\(qualified))", logger: logger)
            for try await flag in rows.decode(Bool.self) { valid = flag }
            return valid
        }
    }

    /// Runs `sql` (a concurrent build or drop) outside any transaction on a leased connection; past
    /// `indexBuildBound`, cancels it on the server from `lock`'s connection (found in `pg_stat_activity` by a marker
    /// comment of its own) and throws once it has ended.
    func boundedConcurrently(_ sql: String, lock: PostgresConnection, client: SessionPool, logger: Logger) async throws {
        let marker = "subrecon migrate \(UUID().uuidString)"
        let statement = PostgresQuery(unsafeSQL: "/* \(marker) */ \(sql)")
        let bound = indexBuildBound(client)
        let outcome = try await withThrowingTaskGroup(of: ConcurrentStep.self) { group in
            group.addTask {
                do {
                    _ = try await client.withLease { try await $0.run(statement, logger: logger) }
                    return .ended(nil)
                } catch {
                    return .ended(error)
                }
            }
            if let bound {
                group.addTask {
                    do {
                        try await Task.sleep(for: bound)
                        return .overran
                    } catch {
                        return .ended(nil)
                    }
                }
            }
            var overran = false
            while let step = try await group.next() {
                switch step {
                case .overran:
                    overran = true
                    let query: PostgresQuery = """
                        select count(pg_cancel_backend(pid))::int from pg_stat_activity \
                        where pid <> pg_backend_pid() and query like \("%\(marker)%")
                        """
                    try await lock.run(query, logger: logger)
                    try await lock.run("show transaction_isolation", logger: logger)  // its snapshot: withMigrationLock
                case .ended(let error):
                    group.cancelAll()
                    return (error, overran)
                }
            }
            return (nil, overran)
        }
        guard let error = outcome.0 else { return }
        if outcome.1, let bound {
            throw DatabaseError.database(
                operation: "migrate",
                reason: "\(sql) ran longer than \(bound) and was cancelled; a larger SUBRECON_DB_STATEMENT_TIMEOUT_SECONDS "
                    + "gives it longer (README, \"Upgrading\")")
        }
        throw error
    }

    private enum ConcurrentStep: Sendable {
        case ended((any Error)?)
        case overran
    }

    static func milliseconds(_ duration: Duration) -> String {
        String(Int64(max(0, (duration / .milliseconds(1)).rounded())))
    }
}
