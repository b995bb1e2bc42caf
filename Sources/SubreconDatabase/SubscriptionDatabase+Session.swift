import Logging
import PostgresNIO
import SubreconPorts

/// Who the job is on the server: `subrecon doctor`'s database line (docs/CONTRACT.md, "subrecon doctor"). Whether
/// its connection is encrypted is the client's to say (`DatabaseSettings.negotiatedTLS`), never the server's
/// `pg_stat_ssl`, which behind a pooler describes the pooler's own connection.
public struct SessionIdentity: Sendable, Hashable {
    /// `current_user`.
    public var role: String
}

extension SubscriptionDatabase {
    /// The role the job's sessions run as.
    public func sessionIdentity() async throws -> SessionIdentity {
        try await run("read the session's role") {
            try await session.withTransaction { connection in
                SessionIdentity(role: try await Self.currentRole(connection: connection, logger: logger))
            }
        }
    }
}
