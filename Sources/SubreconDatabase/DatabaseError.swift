import PostgresNIO
import SubreconPorts

/// Why the database could not do what it was asked. Messages are for the operator and never contain passwords.
public enum DatabaseError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The server could not be reached (connection refused, DNS, timeout, TLS handshake): exit 69.
    case unreachable(endpoint: String, reason: String)
    /// The server answered but refused the session (authentication, missing database, TLS required/unsupported).
    case rejected(endpoint: String, reason: String)
    /// The TLS certificate the server presented is refused (`CertificateRefusal.cause`): exit 69, one line naming
    /// the cause (docs/CONTRACT.md, "The session").
    case certificateRefused(endpoint: String, cause: String)
    /// The server takes no writes (a hot standby, read-only sessions: SQLSTATE 25006) during `operation`: exit 69
    /// naming why (docs/CONTRACT.md, "What `run` checks first").
    case readOnly(operation: String, reason: String)
    /// A table subrecon needs does not exist: the operator must run `subrecon migrate`.
    case schemaMissing(table: String)
    /// The schema is older than this build expects (pending migrations).
    case schemaOutdated(current: Int, required: Int)
    /// A transaction is not in the schema its `search_path` asked for (the schema does not exist, or the role lacks
    /// USAGE on it): exit 78, never "run migrate" (docs/CONTRACT.md, "The session").
    case schemaNotCurrent(requested: String, current: String?)
    /// The job's role lacks a privilege (SQLSTATE 42501) during `operation`: exit 78 naming it.
    case permissionDenied(operation: String, reason: String)
    /// Any other database failure during `operation`.
    case database(operation: String, reason: String)

    public var description: String {
        switch self {
        case .unreachable(let endpoint, let reason): "database at \(endpoint) is unreachable: \(reason)"
        case .rejected(let endpoint, let reason): "database at \(endpoint) refused the connection: \(reason)"
        case .certificateRefused(let endpoint, let cause): "the TLS certificate of the database at \(endpoint) is refused: \(cause)"
        case .readOnly(let operation, let reason):
            "the database is read-only: \(reason); \(operation) cannot write there: point DATABASE_URL at the primary"
        case .schemaMissing(let table):
            "table '\(table)' does not exist in the current schema; run `subrecon migrate` first"
        case .schemaOutdated(let current, let required):
            "database schema is at version \(current), this build needs \(required); run `subrecon migrate` first"
        case .schemaNotCurrent(let requested, let current):
            "search_path asks for schema '\(requested)' but the session's current schema is "
                + (current.map { "'\($0)'" } ?? "none")
                + ": the schema does not exist or the role lacks USAGE on it (create the schema or grant USAGE on it); "
                + "nothing done"
        case .permissionDenied(let operation, let reason):
            "the database role lacks a privilege for \(operation): \(reason); grant it (README, \"Your database\")"
        case .database(let operation, let reason): "database error during \(operation): \(reason)"
        }
    }

    /// True when the CLI should exit 69 (`EX_UNAVAILABLE`).
    public var isUnavailable: Bool {
        switch self {
        case .unreachable, .certificateRefused, .readOnly: true
        default: false
        }
    }

    /// Maps any error thrown by PostgresNIO during `operation` to a `DatabaseError`. A refused certificate is
    /// `certificateRefused` (its host and roots from `settings` when given), any other TLS failure `unreachable`
    /// with the TLS library's reason codes only, never its text (docs/CONTRACT.md, "The session").
    static func wrap(_ error: any Error, operation: String, endpoint: String? = nil, settings: DatabaseSettings? = nil) -> DatabaseError {
        if let error = error as? DatabaseError { return error }
        if let error = error as? PostgresTransactionError {
            if let inner = error.closureError ?? error.beginError ?? error.commitError {
                return wrap(inner, operation: operation, endpoint: endpoint, settings: settings)
            }
        }
        let endpoint = endpoint ?? settings?.endpoint
        if let refusal = CertificateRefusal.refusal(
            in: error, host: settings?.host ?? "the host in DATABASE_URL", trusted: settings?.sslRootCertificatePath)
        {
            return .certificateRefused(endpoint: endpoint ?? "server", cause: refusal.cause)
        }
        if let summary = CertificateRefusal.handshakeSummary((error as? PSQLError)?.underlying ?? error) {
            return .unreachable(endpoint: endpoint ?? "server", reason: summary)
        }
        guard let error = error as? PSQLError else {
            return .database(operation: operation, reason: String(describing: type(of: error)))
        }
        if let info = error.serverInfo {
            let state = info[.sqlState] ?? ""
            let message = info[.message] ?? "server error"
            if state == "42P01" {
                // undefined_table: `relation "users" does not exist`
                let table = message.split(separator: "\"").dropFirst().first.map(String.init) ?? "?"
                return .schemaMissing(table: table)
            }
            if state == "42501" {
                return .permissionDenied(operation: operation, reason: "\(message) (SQLSTATE 42501)")
            }
            if state == "25006" {
                // read_only_sql_transaction: a hot standby, or default_transaction_read_only.
                return .readOnly(operation: operation, reason: "\(message) (SQLSTATE 25006)")
            }
            if state.hasPrefix("28") || state == "3D000" || state.hasPrefix("08") {
                return .rejected(endpoint: endpoint ?? "server", reason: "\(message) (SQLSTATE \(state))")
            }
            return .database(operation: operation, reason: "\(message) (SQLSTATE \(state))")
        }
        switch error.code {
        case .connectionError, .serverClosedConnection, .uncleanShutdown, .failedToAddSSLHandler:
            let reason = error.underlying.map { String(describing: $0) } ?? error.code.description
            return .unreachable(endpoint: endpoint ?? "server", reason: reason)
        case .sslUnsupported:
            return .rejected(endpoint: endpoint ?? "server", reason: "the server does not support TLS (sslmode)")
        default:
            return .database(operation: operation, reason: error.code.description)
        }
    }
}
