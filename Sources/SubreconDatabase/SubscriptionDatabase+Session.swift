import Logging
import PostgresNIO
import SubreconPorts

/// Who the job is on the server and how its connection is carried: `subrecon doctor`'s database line
/// (docs/CONTRACT.md, "subrecon doctor"). Reads the catalog only.
public struct SessionIdentity: Sendable, Hashable {
    /// `current_user`.
    public var role: String
    /// The TLS protocol of this backend's connection as the server sees it (`pg_stat_ssl`: behind a pooler, the
    /// pooler's own connection); nil when it is not encrypted.
    public var tlsVersion: String?
}

extension SubscriptionDatabase {
    /// The role the job's sessions run as and the TLS protocol of one of its connections.
    public func sessionIdentity() async throws -> SessionIdentity {
        try await run("read the session's role and TLS state") {
            try await session.withTransaction { connection in
                let rows = try await connection.run(
                    """
                    select current_user::text, coalesce((select version from pg_stat_ssl where pid = pg_backend_pid() and ssl), '')
                    """, logger: logger)
                for try await (role, version) in rows.decode((String, String).self) {
                    return SessionIdentity(role: role, tlsVersion: version.isEmpty ? nil : version)
                }
                return SessionIdentity(role: "?", tlsVersion: nil)
            }
        }
    }
}
