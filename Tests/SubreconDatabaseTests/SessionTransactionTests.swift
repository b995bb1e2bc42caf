import Foundation
import Logging
import PostgresNIO
import SubreconPorts
import SubreconTestSupport
import Testing

@testable import SubreconDatabase

/// Every unit of work is one transaction that gets the session's settings first, transaction-locally
/// (docs/CONTRACT.md, "The session"): nothing the job sets outlives it on the server connection, which a pooler in
/// transaction mode would hand to the app's clients next.
@Suite("Units of work as transactions (real PostgreSQL)", .serialized, .enabled(if: TestDatabase.isEnabled, TestDatabase.skipMessage))
struct SessionTransactionTests {
    static let logger = Logger(label: "session-transaction-tests")

    /// `statement_timeout`, `lock_timeout`, `idle_in_transaction_session_timeout` and the current schema, as the
    /// connection reads them now.
    static func settings(_ connection: PostgresConnection) async throws -> [String] {
        let rows = try await connection.query(
            """
            select current_setting('statement_timeout'), current_setting('lock_timeout'), \
            current_setting('idle_in_transaction_session_timeout'), coalesce(current_schema()::text, '-')
            """, logger: logger)
        for try await (statement, lock, idle, schema) in rows.decode((String, String, String, String).self) {
            return [statement, lock, idle, schema]
        }
        return []
    }

    @Test("a transaction gets the session's settings and schema, overridable for itself; none of them outlive it")
    func settingsLastTheTransaction() async throws {
        try await TestDatabase.withSchema { schema in
            var settings = try TestDatabase.settings()
            settings.searchPath = schema.name
            settings.timeouts = .init(statement: .seconds(7), lock: .milliseconds(1500), idleInTransaction: .seconds(60))
            let connection = try await PostgresConnection.connect(
                configuration: try settings.connectionConfiguration(), id: 1, logger: Self.logger)
            let before = try await Self.settings(connection)
            let inside = try await connection.inTransaction(session: settings.session, logger: Self.logger) {
                try await Self.settings($0)
            }
            let overridden = try await connection.inTransaction(
                session: settings.session, overriding: ["lock_timeout": "120s"], logger: Self.logger
            ) { try await Self.settings($0) }
            let after = try await Self.settings(connection)
            try await connection.close()
            #expect(inside == ["7s", "1500ms", "1min", schema.name])
            #expect(overridden == ["7s", "2min", "1min", schema.name])
            #expect(after == before)
            #expect(after[0] == "0" && after[3] != schema.name)
        }
    }

    @Test("a transaction in a schema that does not exist is refused naming it, and rolled back")
    func schemaNotCurrent() async throws {
        var settings = try TestDatabase.settings()
        settings.searchPath = "nowhere_\(UInt32.random(in: 0...UInt32.max))"
        let connection = try await PostgresConnection.connect(
            configuration: try settings.connectionConfiguration(), id: 2, logger: Self.logger)
        await #expect(throws: DatabaseError.schemaNotCurrent(requested: settings.searchPath ?? "", current: nil)) {
            try await connection.inTransaction(session: settings.session, logger: Self.logger) { _ in }
        }
        // Not left inside an open transaction: two statements get two transaction ids.
        var ids: [Int64] = []
        for _ in 0..<2 {
            for try await id in try await connection.query("select txid_current()", logger: Self.logger).decode(Int64.self) {
                ids.append(id)
            }
        }
        try await connection.close()
        #expect(ids.count == 2 && ids[0] != ids[1])
    }

    @Test("BEGIN on a connection that closed ends at once with the closed connection's error")
    func beginOnAClosedConnection() async throws {
        let settings = try TestDatabase.settings()
        let connection = try await PostgresConnection.connect(
            configuration: try settings.connectionConfiguration(), id: 3, logger: Self.logger)
        try await connection.close()
        await #expect(throws: ClosedConnectionWatch.closed) {
            try await connection.inTransaction(session: settings.session, logger: Self.logger) { _ in }
        }
    }
}
