import Foundation
import Logging
import PostgresNIO
import SubreconPorts

/// What every unit of work the job sends gets first, as SQL inside its own transaction (docs/CONTRACT.md, "The
/// session"): the three timeouts and the `search_path`, with `set_config(…, true)` (transaction-local), and a check
/// that the transaction really is in the schema asked for, all in one statement right after `begin`.
///
/// Never session-level: behind a pooler in transaction mode (PgBouncer, Supabase's port 6543) each transaction may run
/// on another server connection, so a session setting would be missing from later statements and would stay on the
/// server connection for the app's own clients. Never startup parameters either: a stock PgBouncer refuses them
/// (`unsupported startup parameter: statement_timeout`).
public struct SessionSetup: Sendable, Hashable {
    /// The `search_path` asked for (the URL's `search_path` or `options=-csearch_path=`); nil leaves the server's.
    public var searchPath: String?
    public var timeouts: DatabaseSettings.Timeouts

    public init(searchPath: String?, timeouts: DatabaseSettings.Timeouts) {
        self.searchPath = searchPath
        self.timeouts = timeouts
    }

    /// The schema the job's tables must be in: the first entry of `searchPath` as PostgreSQL reads it (unquoted
    /// names folded to lower case, quoted ones exact); nil when no `search_path` was asked for or it starts with
    /// `$user` (the server resolves that one).
    public var requestedSchema: String? {
        guard let searchPath, let first = Self.entries(searchPath).first, first != "$user" else { return nil }
        return first
    }

    /// The entries of a `search_path` value, each as PostgreSQL names the schema.
    static func entries(_ value: String) -> [String] {
        var entries: [String] = []
        var current = ""
        var quoted = false
        var wasQuoted = false
        var characters = Array(value)[...]
        while let c = characters.popFirst() {
            if quoted {
                if c == "\"" {
                    if characters.first == "\"" {
                        current.append("\"")
                        characters.removeFirst()
                    } else {
                        quoted = false
                    }
                } else {
                    current.append(c)
                }
            } else if c == "\"" {
                quoted = true
                wasQuoted = true
            } else if c == "," {
                entries.append(wasQuoted ? current : current.trimmingCharacters(in: .whitespaces).lowercased())
                current = ""
                wasQuoted = false
            } else if !(c.isWhitespace && current.isEmpty) {
                current.append(c)
            }
        }
        entries.append(wasQuoted ? current : current.trimmingCharacters(in: .whitespaces).lowercased())
        return entries.filter { !$0.isEmpty }
    }

    /// Sets the settings up for the transaction `connection` is in (`begin` already sent), `overriding` some of them
    /// for this transaction only (a migration's longer waits, the shard lock's none), with one statement; throws
    /// `DatabaseError.schemaNotCurrent` when the transaction is not in `requestedSchema` afterwards (the schema does not
    /// exist, or the role lacks USAGE on it). Outside a transaction `set_config(…, true)` would last one statement.
    public func applyLocally(on connection: PostgresConnection, overriding: [String: String] = [:], logger: Logger) async throws {
        var binds = PostgresBindings()
        var calls: [String] = []
        for (name, value) in timeouts.settings {
            binds.append(overriding[name] ?? value)
            calls.append("set_config('\(name)', $\(binds.count), true)")
        }
        if let searchPath {
            binds.append(searchPath)
            calls.append("set_config('search_path', $\(binds.count), true)")
        }
        // Evaluated left to right: current_schema() reads the search_path the calls before it set.
        let sql = "select " + calls.joined(separator: ", ") + ", current_schema()::text"
        var current: String?
        for try await row in try await connection.run(PostgresQuery(unsafeSQL: sql, binds: binds), logger: logger) {
            let cells = row.makeRandomAccess()
            current = try cells[cells.count - 1].decode(String?.self)
        }
        guard let requestedSchema, current != requestedSchema else { return }
        throw DatabaseError.schemaNotCurrent(requested: requestedSchema, current: current)
    }
}

/// The job's pool: every unit of work is one transaction on a leased connection, opened with the session's settings
/// (`SessionSetup.applyLocally`) and committed at its end, so nothing the job sets outlives it on the server
/// connection, whatever pooler sits in between (docs/CONTRACT.md, "The session"). nil `setup`: a pool whose
/// connections carry the settings in their startup parameters (`DatabaseSettings.clientConfiguration(direct:)`); its
/// units of work are transactions all the same.
public struct SessionPool: Sendable {
    public let client: PostgresClient
    public let setup: SessionSetup?
    static let logger = Logger(label: "subrecon.database.session")

    public init(client: PostgresClient, setup: SessionSetup?) {
        self.client = client
        self.setup = setup
    }

    /// Runs `body` as one transaction (`PostgresConnection.inTransaction` with the session's settings) on a leased
    /// connection: committed when it returns, rolled back when it throws. `body` must not open a transaction itself.
    /// `overriding`: settings of this transaction only (a migration's longer waits).
    func withTransaction<R: Sendable>(
        isolation: isolated (any Actor)? = #isolation, overriding: [String: String] = [:],
        _ body: (PostgresConnection) async throws -> R
    ) async throws -> R {
        try await client.withConnection(isolation: isolation) { connection in
            try await connection.inTransaction(
                isolation: isolation, session: setup, overriding: overriding, logger: Self.logger
            ) { connection in try await body(connection) }
        }
    }

    /// Leases a connection for `body`, which opens and ends its own transaction (with `setup`'s settings applied
    /// inside it) and leaves none open: the shard lock's.
    func withLease<R: Sendable>(
        isolation: isolated (any Actor)? = #isolation, _ body: (PostgresConnection) async throws -> R
    ) async throws -> R {
        try await client.withConnection(isolation: isolation) { connection in try await body(connection) }
    }

    /// Runs `query` as a transaction of its own and reads its rows before the connection goes back to the pool.
    @discardableResult
    func query(_ query: PostgresQuery, logger: Logger) async throws -> CollectedRows {
        try await withTransaction { connection in
            CollectedRows(rows: try await connection.run(query, logger: logger).collect())
        }
    }
}

/// The rows of one query, read while its connection was leased.
struct CollectedRows: AsyncSequence, Sendable {
    typealias Element = PostgresRow
    let rows: [PostgresRow]

    func collect() -> [PostgresRow] { rows }

    func makeAsyncIterator() -> Iterator { Iterator(rows: rows[...]) }

    struct Iterator: AsyncIteratorProtocol {
        var rows: ArraySlice<PostgresRow>
        mutating func next() async throws -> PostgresRow? { rows.popFirst() }
    }
}
