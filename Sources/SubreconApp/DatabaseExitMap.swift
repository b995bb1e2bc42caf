import SubreconCore
import SubreconDatabase
import SubreconJob

// The database adapter's failures and their exit codes (docs/CONTRACT.md, "Exit codes"), mapped here, where the
// adapters are wired: the job knows no adapter's error type.

extension DatabaseError: ExitMappedFailure {
    /// A schema the binary cannot use or a privilege the role lacks: 78, one line naming it; any other database
    /// failure 69 (unreachable, refused, an error it answered: nothing done).
    public var exit: (status: ExitStatus, line: String) {
        switch self {
        case .schemaMissing, .schemaOutdated, .schemaNotCurrent, .permissionDenied: (.config, description)
        default: (.unavailable, "\(description); nothing done")
        }
    }
}

extension SchemaNewerThanBinary: ExitMappedFailure {
    /// A schema a newer release migrated: 78 naming both versions.
    public var exit: (status: ExitStatus, line: String) { (.config, description) }
}
