import PostgresNIO

/// Why the store could not do what it was asked. Messages are for the operator and never contain passwords.
public enum DatabaseError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The server could not be reached (connection refused, DNS, timeout, TLS handshake): exit 69.
    case unreachable(endpoint: String, reason: String)
    /// The server answered but refused the session (authentication, missing database, TLS required/unsupported).
    case rejected(endpoint: String, reason: String)
    /// A table subrecon needs does not exist: the operator must run `subrecon migrate`.
    case schemaMissing(table: String)
    /// The schema is older than this build expects (pending migrations).
    case schemaOutdated(current: Int, required: Int)
    /// Any other database failure during `operation`.
    case database(operation: String, reason: String)

    public var description: String {
        switch self {
        case .unreachable(let endpoint, let reason): "database at \(endpoint) is unreachable: \(reason)"
        case .rejected(let endpoint, let reason): "database at \(endpoint) refused the connection: \(reason)"
        case .schemaMissing(let table):
            "table '\(table)' does not exist in the current schema; run `subrecon migrate` first"
        case .schemaOutdated(let current, let required):
            "database schema is at version \(current), this build needs \(required); run `subrecon migrate` first"
        case .database(let operation, let reason): "database error during \(operation): \(reason)"
        }
    }

    /// True when the CLI should exit 69 (`EX_UNAVAILABLE`).
    public var isUnavailable: Bool {
        if case .unreachable = self { return true }
        return false
    }

    /// Maps any error thrown by PostgresNIO during `operation` to a `DatabaseError`.
    static func wrap(_ error: any Error, operation: String, endpoint: String? = nil) -> DatabaseError {
        if let error = error as? DatabaseError { return error }
        if let error = error as? PostgresTransactionError {
            if let inner = error.closureError ?? error.beginError ?? error.commitError {
                return wrap(inner, operation: operation, endpoint: endpoint)
            }
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
