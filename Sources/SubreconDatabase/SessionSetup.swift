import Foundation
import Logging
import PostgresNIO
import Synchronization

/// What every connection the job opens gets right after it is made, as SQL (docs/CONTRACT.md, "Database"): the
/// three timeouts and the `search_path`, with `set_config`, then a check that the session really is in the schema
/// asked for. Sent as startup parameters instead, a stock PgBouncer refuses the connection
/// (`unsupported startup parameter: statement_timeout`) and a pooler that drops `search_path` silently moves the
/// job into `public`.
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

    /// Sets the session up on `connection`; throws `DatabaseError.schemaNotCurrent` when the session is not in
    /// `requestedSchema` afterwards (the schema does not exist, or a pooler hands out server sessions that lost it).
    public func apply(on connection: PostgresConnection, logger: Logger) async throws {
        var binds = PostgresBindings()
        var calls: [String] = []
        for (name, value) in timeouts.settings {
            binds.append(value)
            calls.append("set_config('\(name)', $\(binds.count), false)")
        }
        if let searchPath {
            binds.append(searchPath)
            calls.append("set_config('search_path', $\(binds.count), false)")
        }
        try await connection.run(PostgresQuery(unsafeSQL: "select " + calls.joined(separator: ", "), binds: binds), logger: logger)
        guard let requestedSchema else { return }
        var current: String?
        for try await schema in try await connection.run("select current_schema()::text", logger: logger).decode(String?.self) {
            current = schema
        }
        guard current == requestedSchema else {
            throw DatabaseError.schemaNotCurrent(requested: requestedSchema, current: current)
        }
    }
}

/// The job's pool, every connection set up by `SessionSetup` before its first use (nil: a pool whose connections
/// carry the session in their startup parameters, `DatabaseSettings.clientConfiguration(direct:)`).
public struct SessionPool: Sendable {
    public let client: PostgresClient
    public let setup: SessionSetup?
    private let prepared = PreparedConnections()

    public init(client: PostgresClient, setup: SessionSetup?) {
        self.client = client
        self.setup = setup
    }

    /// Leases a connection, set up on its first lease, for `body`.
    func withConnection<R: Sendable>(
        isolation: isolated (any Actor)? = #isolation, _ body: (PostgresConnection) async throws -> R
    ) async throws -> R {
        try await client.withConnection(isolation: isolation) { connection in
            try await prepare(connection)
            return try await body(connection)
        }
    }

    /// Runs `query` on a set-up connection and reads its rows before the connection goes back to the pool.
    @discardableResult
    func query(_ query: PostgresQuery, logger: Logger) async throws -> CollectedRows {
        try await withConnection { connection in
            CollectedRows(rows: try await connection.run(query, logger: logger).collect())
        }
    }

    private func prepare(_ connection: PostgresConnection) async throws {
        guard let setup, !prepared.contains(connection.id) else { return }
        try await setup.apply(on: connection, logger: Logger(label: "subrecon.database.session"))
        prepared.insert(connection.id)
    }
}

/// The ids of the pool's connections that were set up (a new connection after a reconnect has a new id).
private final class PreparedConnections: Sendable {
    private let ids = Mutex<Set<Int>>([])
    func contains(_ id: Int) -> Bool { ids.withLock { $0.contains(id) } }
    func insert(_ id: Int) { _ = ids.withLock { $0.insert(id) } }
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
