import Foundation
import Logging
import PostgresNIO
import SubreconPorts
import SubreconTestSupport
import Testing

@testable import SubreconDatabase

/// The shard lock's transaction stays open all night (docs/CONTRACT.md, "The session"): it must hold no snapshot, or
/// vacuum could remove no dead row for hours. A role or database whose `default_transaction_isolation` is
/// `repeatable read` or `serializable` would make it keep its first statement's snapshot; every transaction of the job
/// is read committed explicitly.
@Suite(
    "The lock's transaction holds no snapshot (real PostgreSQL)", .serialized,
    .enabled(if: TestDatabase.isEnabled, TestDatabase.skipMessage))
struct LockSnapshotTests {
    static let logger = Logger(label: "lock-snapshot-tests")

    /// A login role `snap_<hex>` whose sessions default to `isolation`, with USAGE on `schema`; dropped afterwards.
    static func withRole(isolation: String, schema: TestSchema, _ body: (DatabaseSettings) async throws -> Void) async throws {
        let role = "snap_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(12)
        try await schema.client.query(PostgresQuery(unsafeSQL: "create role \(role) login"))
        do {
            try await schema.client.query(PostgresQuery(unsafeSQL: "alter role \(role) set default_transaction_isolation = '\(isolation)'"))
            try await schema.client.query(PostgresQuery(unsafeSQL: "grant usage on schema \(schema.name) to \(role)"))
            var settings = schema.settings
            settings.username = role
            settings.applicationName = "snap-" + role
            try await body(settings)
        } catch {
            _ = try? await schema.client.query(PostgresQuery(unsafeSQL: "drop owned by \(role)"))
            _ = try? await schema.client.query(PostgresQuery(unsafeSQL: "drop role \(role)"))
            throw error
        }
        _ = try? await schema.client.query(PostgresQuery(unsafeSQL: "drop owned by \(role)"))
        _ = try? await schema.client.query(PostgresQuery(unsafeSQL: "drop role \(role)"))
    }

    /// `backend_xmin` (nil when none) and `state` of the backends whose `application_name` is `name`.
    static func backends(_ client: PostgresClient, named name: String) async throws -> [(xmin: String?, state: String)] {
        var binds = PostgresBindings()
        binds.append(name)
        let rows = try await client.query(
            PostgresQuery(
                unsafeSQL: "select backend_xmin::text, coalesce(state, '') from pg_stat_activity where application_name = $1",
                binds: binds))
        var found: [(String?, String)] = []
        for try await (xmin, state) in rows.decode((String?, String).self) { found.append((xmin, state)) }
        return found
    }

    @Test("whatever the role's default_transaction_isolation, the held lock's backend has no backend_xmin")
    func lockHoldsNoSnapshot() async throws {
        // Read committed too: the unnamed portal of a last statement that returned rows keeps its snapshot.
        for isolation in ["read committed", "repeatable read", "serializable"] {
            try await TestDatabase.withSchema { schema in
                try await Self.withRole(isolation: isolation, schema: schema) { settings in
                    let name = (settings.applicationName ?? "") + " shard lock"
                    let seen = try await ShardLock.withLock(settings: settings, shard: .all, logger: Self.logger, onLost: { _ in }) {
                        // The lock is held and its transaction idle, as it is all night while the run works.
                        try await Task.sleep(for: .milliseconds(200))
                        return try await Self.backends(schema.client, named: name)
                    }
                    let backends = try #require(seen)
                    #expect(backends.count == 1, "\(isolation)")
                    #expect(backends.first?.state == "idle in transaction", "\(isolation)")
                    #expect(backends.first?.xmin == nil, "\(isolation): the lock's transaction holds a snapshot")
                }
            }
        }
    }

    @Test("every unit of work is read committed whatever the role's default isolation")
    func unitsOfWorkAreReadCommitted() async throws {
        try await TestDatabase.withSchema { schema in
            try await Self.withRole(isolation: "serializable", schema: schema) { settings in
                let connection = try await PostgresConnection.connect(
                    configuration: try settings.connectionConfiguration(), id: 7, logger: Self.logger)
                let isolation = try await connection.inTransaction(session: settings.session, logger: Self.logger) { connection in
                    var value = ""
                    let rows = try await connection.query("select current_setting('transaction_isolation')", logger: Self.logger)
                    for try await setting in rows.decode(String.self) { value = setting }
                    return value
                }
                try await connection.close()
                #expect(isolation == "read committed")
            }
        }
    }

    @Test("transaction_timeout is turned off for the lock only where the server has it: on this server the lock is taken")
    func transactionTimeoutWhereItExists() async throws {
        try await TestDatabase.withSchema { schema in
            var settings = schema.settings
            settings.applicationName = "snap-timeout-" + schema.name
            let inside = try await ShardLock.withLock(settings: settings, shard: .all, logger: Self.logger, onLost: { _ in }) {
                var found: [String?] = []
                let rows = try await schema.client.query("select current_setting('transaction_timeout', true)")
                for try await value in rows.decode(String?.self) { found.append(value) }
                return found
            }
            let setting = try #require(inside)
            // PostgreSQL 15 has no transaction_timeout: the lock was taken all the same.
            #expect(setting.count == 1)
        }
    }
}
