import Foundation
import PostgresNIO
import SubreconPorts

/// Where and how to connect to PostgreSQL, built once from an environment dictionary.
///
/// Reads `DATABASE_URL` (`postgres://` or `postgresql://user:pass@host:port/db?sslmode=...`) or, when it is
/// absent, libpq's `PGHOST PGPORT PGUSER PGPASSWORD PGDATABASE PGSSLMODE` (defaults `localhost:5432`, user
/// `PGUSER` or `USER`, database = user). Parts missing from the URL fall back to the same variables, as libpq does.
/// Does not read the process environment or `*_FILE` variables: the caller resolves those first.
/// `description` never shows the password.
public struct DatabaseSettings: Sendable, Hashable, CustomStringConvertible {
    /// libpq's `sslmode` values and what they mean here.
    public enum SSLMode: String, Sendable, Hashable, CaseIterable {
        /// No TLS.
        case disable
        /// TLS when the server offers it, unverified (PostgresNIO has no "plain first, then TLS" mode: same as `prefer`).
        case allow
        /// TLS when the server offers it, unverified.
        case prefer
        /// TLS required, certificate not verified.
        case require
        /// TLS required, certificate chain verified, host name not checked.
        case verifyCA = "verify-ca"
        /// TLS required, certificate chain and host name verified.
        case verifyFull = "verify-full"
    }

    /// Host name or IP address; nil when connecting over a unix socket.
    public var host: String?
    /// Path of the unix socket file (`DIR/.s.PGSQL.PORT`) when the host is a directory.
    public var unixSocketPath: String?
    public var port: Int
    public var username: String
    public var password: String?
    public var database: String
    public var sslMode: SSLMode
    /// PEM file of roots to trust for `verify-ca` / `verify-full` (`sslrootcert`); nil = system roots.
    public var sslRootCertificatePath: String?
    /// The `search_path`, set by `SessionSetup` at the start of every transaction: tables live in its first schema,
    /// which the transaction must then really be in (docs/CONTRACT.md, "The session").
    public var searchPath: String?
    /// Becomes the `application_name` startup parameter.
    public var applicationName: String?
    /// Where the settings came from: `DATABASE_URL` or `PG*`, for messages.
    public var origin: String
    /// Limits every transaction of subrecon sets first (`SessionSetup`), so no statement, lock wait or forgotten
    /// transaction can hold the night (or the app's rows) indefinitely.
    public var timeouts = Timeouts()

    /// `statement_timeout`, `lock_timeout` and `idle_in_transaction_session_timeout` of every transaction; zero = none.
    public struct Timeouts: Sendable, Hashable {
        /// Longest any one statement may run (the candidate count on a large table is the slowest).
        public var statement: Duration
        /// Longest a statement waits for a lock (a migration's DDL, the shard-lock gate). Row locks are never
        /// waited for when applying (`SKIP LOCKED`).
        public var lock: Duration
        /// Longest a session may sit idle inside an open transaction before the server ends it.
        public var idleInTransaction: Duration

        public init(statement: Duration = .seconds(300), lock: Duration = .seconds(10), idleInTransaction: Duration = .seconds(60)) {
            self.statement = statement
            self.lock = lock
            self.idleInTransaction = idleInTransaction
        }

        /// The three settings and their values in milliseconds, as `SessionSetup` sets them.
        public var settings: [(String, String)] {
            func millis(_ duration: Duration) -> String { String(Int64(max(0, (duration / .milliseconds(1)).rounded()))) }
            return [
                ("statement_timeout", "\(millis(statement))"), ("lock_timeout", "\(millis(lock))"),
                ("idle_in_transaction_session_timeout", "\(millis(idleInTransaction))"),
            ]
        }
    }

    public init(
        host: String? = "localhost", unixSocketPath: String? = nil, port: Int = 5432, username: String,
        password: String? = nil, database: String, sslMode: SSLMode = .prefer, sslRootCertificatePath: String? = nil,
        searchPath: String? = nil, applicationName: String? = "subrecon", origin: String = "code"
    ) {
        self.host = host
        self.unixSocketPath = unixSocketPath
        self.port = port
        self.username = username
        self.password = password
        self.database = database
        self.sslMode = sslMode
        self.sslRootCertificatePath = sslRootCertificatePath
        self.searchPath = searchPath
        self.applicationName = applicationName
        self.origin = origin
    }

    /// `host:port` or the socket path, for messages and logs.
    public var endpoint: String {
        if let unixSocketPath { return unixSocketPath }
        let host = host ?? "localhost"
        return host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }

    /// A URL-like rendering with the password replaced by `***`.
    public var description: String {
        let credentials = password == nil ? username : "\(username):***"
        var text = "postgres://\(credentials)@\(endpoint)/\(database)?sslmode=\(sslMode.rawValue)"
        if let searchPath { text += "&search_path=\(searchPath)" }
        return text
    }

    /// The startup parameters sent with every connection: `application_name` only, which every pooler passes on
    /// (a stock PgBouncer refuses any other, `unsupported startup parameter: statement_timeout`). The timeouts and
    /// `search_path` are set by one statement at the start of every transaction (`SessionSetup`, docs/CONTRACT.md,
    /// "The session").
    public var startupParameters: [(String, String)] {
        applicationName.map { [("application_name", $0)] } ?? []
    }

    /// The whole session as startup parameters (`search_path`, `application_name`, the timeouts), for a client that
    /// talks to PostgreSQL directly and runs no `SessionSetup` of its own (the test support, the benchmarks).
    public var directStartupParameters: [(String, String)] {
        var parameters: [(String, String)] = []
        if let searchPath { parameters.append(("search_path", searchPath)) }
        parameters.append(contentsOf: startupParameters)
        parameters.append(contentsOf: timeouts.settings)
        return parameters
    }

    /// How `SessionSetup` sets this session up.
    public var session: SessionSetup { SessionSetup(searchPath: searchPath, timeouts: timeouts) }

    /// The NIOSSL configuration for `sslMode`; nil for `disable`.
    public func tlsConfiguration() -> TLSConfiguration? {
        var tls = TLSConfiguration.makeClientConfiguration()
        switch sslMode {
        case .disable: return nil
        case .allow, .prefer, .require: tls.certificateVerification = .none
        case .verifyCA: tls.certificateVerification = .noHostnameVerification
        case .verifyFull: tls.certificateVerification = .fullVerification
        }
        if let sslRootCertificatePath, sslMode == .verifyCA || sslMode == .verifyFull {
            tls.trustRoots = .file(sslRootCertificatePath)
        }
        return tls
    }

    /// How long a pooled connection stays open unused. Each time a connection goes back to the pool, PostgresNIO's
    /// pool starts a `Task.sleep` for it. The next lease cancels that sleep, but a cancelled sleep's timer stays
    /// queued, with its task, until its instant (section 16 of BENCHMARKS.md). With the library's 60 s, a night
    /// kept every lease of its last minute in memory: a plateau of about 10 MB. With 5 s, it keeps 5 s of leases.
    /// A busy night leases every connection far more often than that; a connection idle for 5 s is opened again
    /// when needed (the shard lock has a connection of its own, outside the pool).
    static let connectionIdleTimeout: Duration = .seconds(5)

    /// A pool configuration for `PostgresClient`. `direct`: the whole session as startup parameters
    /// (`directStartupParameters`), for a pool that no `SubscriptionDatabase` sets up (test support, benchmarks).
    public func clientConfiguration(maximumConnections: Int = 20, direct: Bool = false) -> PostgresClient.Configuration {
        var configuration: PostgresClient.Configuration
        if let unixSocketPath {
            configuration = .init(unixSocketPath: unixSocketPath, username: username, password: password, database: database)
        } else {
            let tls: PostgresClient.Configuration.TLS
            switch (sslMode, tlsConfiguration()) {
            case (_, nil): tls = .disable
            case (.allow, let config?), (.prefer, let config?): tls = .prefer(config)
            case (_, let config?): tls = .require(config)
            }
            configuration = .init(
                host: host ?? "localhost", port: port, username: username, password: password, database: database,
                tls: tls)
        }
        configuration.options.additionalStartupParameters = direct ? directStartupParameters : startupParameters
        configuration.options.maximumConnections = max(2, maximumConnections)
        configuration.options.connectionIdleTimeout = Self.connectionIdleTimeout
        return configuration
    }

    /// A single-connection configuration (used for the reachability check).
    public func connectionConfiguration() throws -> PostgresConnection.Configuration {
        var configuration: PostgresConnection.Configuration
        if let unixSocketPath {
            configuration = .init(unixSocketPath: unixSocketPath, username: username, password: password, database: database)
        } else {
            let tls: PostgresConnection.Configuration.TLS
            if let config = tlsConfiguration() {
                let context = try NIOSSLContext(configuration: config)
                tls = sslMode == .allow || sslMode == .prefer ? .prefer(context) : .require(context)
            } else {
                tls = .disable
            }
            configuration = .init(
                host: host ?? "localhost", port: port, username: username, password: password, database: database,
                tls: tls)
        }
        configuration.options.additionalStartupParameters = startupParameters
        return configuration
    }
}

extension DatabaseSettings: CustomDebugStringConvertible, CustomReflectable {
    public var debugDescription: String { description }

    /// Mirrors the settings with the password redacted, so `dump` and debuggers do not show it.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "host": host as Any, "unixSocketPath": unixSocketPath as Any, "port": port, "username": username,
                "password": password == nil ? "nil" : "***", "database": database, "sslMode": sslMode,
                "searchPath": searchPath as Any, "origin": origin,
            ], displayStyle: .struct)
    }
}

/// A malformed database setting. Names the variable; never contains the password or the URL.
public struct DatabaseSettingsError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The environment variable at fault (`DATABASE_URL`, `PGPORT`, ...).
    public var variable: String
    public var reason: String
    public init(variable: String, reason: String) {
        self.variable = variable
        self.reason = reason
    }
    public var description: String { "\(variable) is malformed: \(reason)" }
}
