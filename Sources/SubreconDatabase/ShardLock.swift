import Logging
import PostgresNIO
import SubreconPorts
import Synchronization

/// The advisory lock that keeps two runs off the same users (docs/CONTRACT.md, "Applying"), on a connection of its own
/// held for the whole run.
///
/// Two transaction-scoped locks, both keyed by `current_schema()`, held by a transaction left open for the whole run
/// (so they hold behind a pooler in transaction mode as on a direct connection): a shared lock on the shard *count*
/// N and an exclusive lock on the shard `I/N`. Runs of one layout (`0/4` beside `1/4`) coexist; a second `1/4` finds
/// its shard taken; a run whose count differs (`0/1` or `0/2` beside any `I/4`) would overlap users and finds the
/// layout taken. When the lock's connection closes (server restart, `pg_terminate_backend`, network, a pooler
/// closing it) the lock is gone with it, and `onLost` is told so the run stops (exit 75).
public enum ShardLock {
    /// Runs `body` holding the lock of `shard`; nil at once, without running `body`, when another run holds this
    /// shard or one overlapping it.
    public static func withLock<T: Sendable>(
        settings: DatabaseSettings, shard: ShardSpec, logger: Logger,
        onLost: @escaping @Sendable (String) -> Void, _ body: () async throws -> T
    ) async throws -> T? {
        var lockSettings = settings
        lockSettings.applicationName = (settings.applicationName ?? "subrecon") + " shard lock"
        let connection: PostgresConnection
        do {
            connection = try await PostgresConnection.connect(
                configuration: try lockSettings.connectionConfiguration(), id: 0, logger: logger)
        } catch {
            throw DatabaseError.wrap(error, operation: "shard lock", endpoint: settings.endpoint)
        }
        do {
            let session = lockSettings.session
            guard try await whileOpen(connection, { try await take(shard, on: connection, session: session, logger: logger) }) else {
                try? await connection.close()
                return nil
            }
        } catch {
            try? await connection.close()
            throw DatabaseError.wrap(error, operation: "shard lock", endpoint: settings.endpoint)
        }
        logger.debug("took shard lock", metadata: ["shard": "\(shard)"])
        // The connection closing (server restart, pg_terminate_backend, network) ends the lock with it. Its close
        // is watched rather than polled: a query on a connection the server ended may never complete.
        let watch = Watch()
        connection.closeFuture.whenComplete { _ in
            guard watch.markLost() else { return }
            logger.error("lost the shard lock's database connection", metadata: ["shard": "\(shard)"])
            onLost("lost the shard lock (its database connection ended)")
        }
        func release() async {
            guard watch.release() else { return }
            _ = try? await whileOpen(connection) { try await connection.run(unlock, logger: logger) }
            try? await connection.close()
        }
        let value: T
        do {
            value = try await body()
        } catch {
            await release()
            throw error
        }
        await release()
        return value
    }

    /// Runs `body` (queries on the lock's own connection) until it finishes or the connection closes, whichever
    /// comes first (`ClosedConnectionWatch`): a query on a connection the server ended may never complete.
    static func whileOpen<T: Sendable>(
        _ connection: PostgresConnection, _ body: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        try await ClosedConnectionWatch.shared.race(
            connection, closed: .database(operation: "shard lock", reason: "the lock's database connection closed"), body)
    }

    /// Whether the lock's connection was lost, or released by us first.
    private final class Watch: Sendable {
        private let state = Mutex((released: false, lost: false))
        /// True when the loss happened while the lock was held.
        func markLost() -> Bool {
            state.withLock { state in
                defer { state.lost = true }
                return !state.released && !state.lost
            }
        }
        /// True when the connection is still there to release the lock on.
        func release() -> Bool {
            state.withLock { state in
                state.released = true
                return !state.lost
            }
        }
    }

    /// Opens the transaction the lock lives in and takes the shard's locks in it; the transaction stays open (and the
    /// locks held) until `release` ends it. Transaction-scoped locks in an open transaction hold the same way on a
    /// direct connection and behind a pooler in session or transaction mode, which keeps a client's server
    /// connection for as long as its transaction is open (docs/CONTRACT.md, "Database"). The open transaction is
    /// read committed whatever `default_transaction_isolation` the role or database sets, so it holds no snapshot
    /// between statements and writes nothing: it holds back no vacuum (`backend_xmin` stays null). Its idle and
    /// statement timeouts are off, and so is `transaction_timeout` where the server has it (PostgreSQL 17), which
    /// would otherwise end the lock mid-night (docs/CONTRACT.md, "The session").
    ///
    /// The layout's shared lock is taken first, then other layouts are looked for: two runs of different layouts
    /// starting at the same instant may both find the other and both be turned away, never both run.
    static func take(
        _ shard: ShardSpec, on connection: PostgresConnection, session: SessionSetup? = nil, logger: Logger
    ) async throws -> Bool {
        let key = "subrecon.shard.\(shard.index)/\(shard.count)"
        let count = shard.count
        try await connection.run(PostgresConnection.beginReadCommitted, logger: logger)
        do {
            // The session's settings inside the lock's transaction, as every unit of work has them (docs/CONTRACT.md,
            // "The session"): the locks are keyed by `current_schema()`. The transaction stays open all night, so its
            // idle and statement timeouts are off.
            try await connection.applyLocally(
                session, overriding: ["idle_in_transaction_session_timeout": "0", "statement_timeout": "0"], logger: logger)
            var acquired = false
            let shared = try await connection.run(
                "select pg_try_advisory_xact_lock_shared(hashtext('subrecon.shards:' || current_schema()), \(count)::int4)",
                logger: logger)
            for try await flag in shared.decode(Bool.self) { acquired = flag }
            if acquired {
                var overlapping = false
                let others = try await connection.run(
                    """
                    select exists (select 1 from pg_locks where locktype = 'advisory' and granted and pid <> pg_backend_pid() \
                    and database = (select oid from pg_database where datname = current_database()) \
                    and classid = (hashtext('subrecon.shards:' || current_schema())::bigint & 4294967295)::oid \
                    and objsubid = 2 and objid <> 0::oid and objid <> \(count)::int4::oid)
                    """, logger: logger)
                for try await flag in others.decode(Bool.self) { overlapping = flag }
                acquired = false
                if !overlapping {
                    let rows = try await connection.run(
                        "select pg_try_advisory_xact_lock(hashtext('subrecon.shard:' || current_schema()), hashtext(\(key)))",
                        logger: logger)
                    for try await flag in rows.decode(Bool.self) { acquired = flag }
                }
            }
            try await connection.run(acquired ? noTransactionTimeout : "rollback", logger: logger)
            return acquired
        } catch {
            _ = try? await connection.run("rollback", logger: logger)
            throw error
        }
    }

    /// The lock's transaction's last statement before it idles all night. It turns `transaction_timeout` off where
    /// the server has that setting (PostgreSQL 17 and later; `current_setting(…, true)` is null before): set on the
    /// role or database, it would end the lock every night; on a server without it, it sets nothing and fails
    /// nothing. It is a `do` block, a statement that returns no rows: the extended protocol's unnamed portal of a
    /// query that returned rows keeps its snapshot (and `backend_xmin`) until the next statement or the transaction's
    /// end, so the last statement must not be one.
    static let noTransactionTimeout: PostgresQuery = """
        do $$ begin if current_setting('transaction_timeout', true) is not null then \
        perform set_config('transaction_timeout', '0', true); end if; end $$
        """

    /// Ends the lock's transaction: its locks, whatever the shard, go with it.
    static let unlock: PostgresQuery = "rollback"
}
