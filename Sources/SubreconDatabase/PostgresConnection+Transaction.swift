import Logging
import PostgresNIO
import SubreconPorts

extension PostgresConnection {
    /// How every transaction of the job begins: read committed, explicitly, whatever `default_transaction_isolation`
    /// the role or database sets (docs/CONTRACT.md, "The session"). Under `repeatable read` or `serializable` a
    /// transaction keeps the snapshot of its first statement to its end: the shard lock's, open all night, would
    /// hold back vacuum for hours, and a page of candidates could be refused as a serialization failure.
    static let beginReadCommitted: PostgresQuery = "begin isolation level read committed"

    /// Runs `body` between `BEGIN` (read committed: `beginReadCommitted`) and `COMMIT`, rolling back when it throws; right after `BEGIN`, the session's
    /// settings and `overriding` are applied transaction-locally (`applyLocally`). The body's error is rethrown as is
    /// (unlike `withTransaction`, which wraps it), so typed outcomes such as a lost compare-and-set stay visible.
    /// `BEGIN`, `COMMIT` and `ROLLBACK` end when the connection closes, as every statement does (`run`).
    func inTransaction<T>(
        isolation: isolated (any Actor)? = #isolation, session: SessionSetup? = nil, overriding: [String: String] = [:],
        logger: Logger, _ body: (PostgresConnection) async throws -> T
    ) async throws -> T {
        try await run(Self.beginReadCommitted, logger: logger)
        do {
            try await applyLocally(session, overriding: overriding, logger: logger)
            let value = try await body(self)
            try await run("commit", logger: logger)
            return value
        } catch {
            do {
                try await run("rollback", logger: logger)
            } catch {
                // Never back to a pool inside a transaction it could not end.
                try? await close()
            }
            throw error
        }
    }

    /// Inside a transaction: `session`'s settings with `overriding` (`SessionSetup.applyLocally`), or, without a
    /// session (its settings are the connection's startup parameters), `overriding` alone; one statement, none when
    /// there is nothing to set.
    func applyLocally(_ session: SessionSetup?, overriding: [String: String], logger: Logger) async throws {
        if let session {
            try await session.applyLocally(on: self, overriding: overriding, logger: logger)
        } else if !overriding.isEmpty {
            var binds = PostgresBindings()
            var calls: [String] = []
            for (name, value) in overriding.sorted(by: { $0.key < $1.key }) {
                binds.append(name)
                binds.append(value)
                calls.append("set_config($\(binds.count - 1), $\(binds.count), true)")
            }
            try await run(PostgresQuery(unsafeSQL: "select " + calls.joined(separator: ", "), binds: binds), logger: logger)
        }
    }
}
