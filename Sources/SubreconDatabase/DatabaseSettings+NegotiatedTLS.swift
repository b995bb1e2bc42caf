import Logging
import PostgresNIO

extension DatabaseSettings {
    /// The TLS protocol the job's own connection negotiates (docs/CONTRACT.md, "subrecon doctor"), as its client side
    /// sees it: one connection opened as the job opens its own (this host and port, this `sslmode`), its channel
    /// asked whether a TLS handler carries it and which protocol that handler agreed; nil when it is not encrypted
    /// (`sslmode=disable`, a server or pooler that declined `prefer`'s TLS, a Unix socket). Never the server's
    /// `pg_stat_ssl`: behind a pooler that describes the pooler's own connection to the server.
    public func negotiatedTLS(logger: Logger) async throws -> String? {
        guard unixSocketPath == nil, sslMode != .disable else { return nil }
        let template = try connectionConfiguration()
        let channel: any Channel
        do {
            channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton).connectTimeout(.seconds(10))
                .connect(host: host ?? "localhost", port: port).get()
        } catch {
            throw DatabaseError.wrap(error, operation: "read the connection's TLS", settings: self)
        }
        var configuration = PostgresConnection.Configuration(
            establishedChannel: channel, tls: template.tls, username: username, password: password, database: database)
        configuration.options = template.options
        let connection: PostgresConnection
        do {
            // On the channel's own event loop: the connection sets up the established channel's pipeline there (on any
            // other loop that is a data race, and a debug build traps).
            connection = try await PostgresConnection.connect(
                on: channel.eventLoop, configuration: configuration, id: 0, logger: logger)
        } catch {
            channel.close(promise: nil)
            throw DatabaseError.wrap(error, operation: "read the connection's TLS", settings: self)
        }
        let version = try? await channel.eventLoop.submit { try channel.pipeline.syncOperations.nioSSL_tlsVersion() }.get()
        try? await connection.close()
        return version.flatMap { $0 }.map(Self.name)
    }

    /// A TLS protocol as PostgreSQL's `pg_stat_ssl` names it.
    static func name(_ version: TLSVersion) -> String {
        switch version {
        case .tlsv1: "TLSv1"
        case .tlsv11: "TLSv1.1"
        case .tlsv12: "TLSv1.2"
        case .tlsv13: "TLSv1.3"
        }
    }
}
