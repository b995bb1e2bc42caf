import Logging
import PostgresNIO
import SubreconCore
import SubreconPorts

/// The `users` relation a run reads and writes, as detected once before the run (CONTRACT "Database").
///
/// subrecon's own `users` is a table with every contract column. An app's own `users` may be a table or a view
/// (updatable through INSTEAD OF triggers) and may lack the optional store identifiers whose source is not
/// configured: the run then selects `null::text` for them.
public struct UsersRelation: Sendable, Hashable {
    /// True when `users` is a table (`relkind` r or p): rows can be locked with `FOR UPDATE SKIP LOCKED`.
    /// False for a view: the compare-and-set is the update's own `updated_at` guard (and the view's trigger's).
    public var isTable: Bool
    /// The stores' identifier columns the job knows (declared by their adapters), in order: optional in `users`.
    public var identifierColumns: [IdentifierColumn]
    /// The identifier columns the relation has with a text type.
    public var optionalColumns: Set<String>
    /// The relation has the optional `account_token` (CONTRACT "Database", "Whose purchase it is") as text: read into `UserRow.accountToken` and
    /// matched by `owners(ofAccounts:)`; without it the run selects `null::text`.
    public var hasAccountToken: Bool

    public init(
        isTable: Bool, optionalColumns: Set<String>, identifierColumns: [IdentifierColumn] = [], hasAccountToken: Bool = false
    ) {
        self.hasAccountToken = hasAccountToken
        self.isTable = isTable
        self.optionalColumns = optionalColumns
        self.identifierColumns = identifierColumns
    }

    /// subrecon's own table after every migration: all columns, lockable.
    public static func subreconTable(_ columns: [IdentifierColumn]) -> UsersRelation {
        UsersRelation(isTable: true, optionalColumns: Set(columns.map(\.name)), identifierColumns: columns, hasAccountToken: true)
    }

    /// The identifier columns the relation has (`identifierColumns` it can read and write), in order.
    var presentIdentifierColumns: [IdentifierColumn] { identifierColumns.filter { optionalColumns.contains($0.name) } }

    /// Whether a feed's identifiers can be looked up in `column`: the contract's Apple column, or an identifier
    /// column the relation has. An app's `users` without the column matches nothing.
    func canMatch(_ column: FeedColumn) -> Bool {
        column == .appleOriginalTransactionID || optionalColumns.contains(column.rawValue)
    }
}

/// The columns `users` must have (CONTRACT "Database") and the check of a relation against them.
public enum UsersContract {
    /// The type a contract column needs.
    public enum ColumnType: String, Sendable, Hashable {
        case text, integer, timestamptz, boolean

        /// Whether a PostgreSQL type (its `pg_type.typname`; a domain's base type) is accepted: text also as
        /// `varchar` (same ordering and comparisons as text); integer as smallint, integer or bigint; timestamptz and
        /// boolean exactly (`timestamp` without time zone is ambiguous and rejected).
        func accepts(_ typeName: String) -> Bool {
            switch self {
            case .text: ["text", "varchar"].contains(typeName)
            case .integer: ["int2", "int4", "int8"].contains(typeName)
            case .timestamptz: typeName == "timestamptz"
            case .boolean: typeName == "bool"
            }
        }
    }

    /// Every `users` relation needs these.
    public static let requiredColumns: [(name: String, type: ColumnType)] = [
        ("id", .text), ("current_tier", .integer), ("subscription_status", .text), ("subscription_end_date", .timestamptz),
        ("grace_period_ends_at", .timestamptz), ("subscription_source", .text), ("iap_product_id", .text),
        ("iap_original_transaction_id", .text), ("auto_renew", .boolean), ("updated_at", .timestamptz),
    ]

    /// Optional contract columns: a relation without one is fine; one it has must have this type (CONTRACT "Database").
    public static let optionalContractColumns: [(name: String, type: ColumnType)] = [("account_token", .text)]

    /// One column of the relation: its name and its type's name (`pg_type.typname`, a domain's base type).
    public struct Column: Sendable, Hashable {
        public var name: String
        public var typeName: String
        /// How the type is shown to the operator (`format_type`, e.g. `character varying(40)`).
        public var displayType: String
    }

    /// What the relation lacks: one configuration line when not empty.
    public struct Violation: Error, Sendable, Hashable, CustomStringConvertible {
        /// `schema.users` as resolved, and what it is (`table`, `view`, ...).
        public var relation: String
        public var missing: [String]
        public var wrongType: [String]
        /// `users` is not in the first schema of `search_path` but in a later one: `migrate` would create subrecon's
        /// own `users` in front of it.
        public var shadowed = false
        /// Why the relation cannot take the job's UPDATE (a view that is not auto-updatable and has no INSTEAD OF
        /// UPDATE trigger, or contract columns it cannot write); nil when it can.
        public var notUpdatable: String?

        public init(
            relation: String, missing: [String], wrongType: [String], shadowed: Bool = false, notUpdatable: String? = nil
        ) {
            self.relation = relation
            self.missing = missing
            self.wrongType = wrongType
            self.shadowed = shadowed
            self.notUpdatable = notUpdatable
        }

        /// `users (app.users, a view) is missing subscription_source (text); has current_tier of type text (needs integer)`:
        /// the text after `configuration error: ` (the caller adds it).
        public var problem: String {
            if shadowed {
                return "(\(relation)) is not in the first schema of search_path, where subrecon's tables go: migrate "
                    + "would create a users table in front of it; put that schema first in search_path, or create a view "
                    + "users in the first schema (CONTRACT 'Database'; nothing was changed)"
            }
            if let notUpdatable {
                return "(\(relation)) cannot be updated: \(notUpdatable) (CONTRACT 'Database': subrecon writes the contract "
                    + "columns through it; make it a simple view or give it an INSTEAD OF UPDATE trigger; nothing was changed)"
            }
            var parts: [String] = []
            if !missing.isEmpty { parts.append("is missing " + missing.joined(separator: ", ")) }
            if !wrongType.isEmpty { parts.append("has " + wrongType.joined(separator: ", ")) }
            return "(\(relation)) " + parts.joined(separator: "; ")
                + " (CONTRACT 'Database': fix the relation, or the view subrecon reads; nothing was changed)"
        }

        public var description: String { "configuration error: users \(problem)" }
    }

    /// Checks `columns` (nil: no relation named `users`) against the contract plus `requiredOptional`.
    /// Returns nil when the relation satisfies it.
    static func violation(relation: String, columns: [Column], requiredOptional: Set<String>) -> Violation? {
        let byName = Dictionary(columns.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        var missing: [String] = []
        var wrongType: [String] = []
        let optional = requiredOptional.sorted().map { (name: $0, type: ColumnType.text) }
        for (name, type) in requiredColumns + optional {
            guard let column = byName[name] else {
                missing.append("\(name) (\(type.rawValue))")
                continue
            }
            if !type.accepts(column.typeName) {
                wrongType.append("\(name) of type \(column.displayType) (needs \(type.rawValue))")
            }
        }
        for (name, type) in optionalContractColumns where !requiredOptional.contains(name) {
            if let column = byName[name], !type.accepts(column.typeName) {
                wrongType.append("\(name) of type \(column.displayType) (needs \(type.rawValue))")
            }
        }
        guard !missing.isEmpty || !wrongType.isEmpty else { return nil }
        return Violation(relation: relation, missing: missing, wrongType: wrongType)
    }

    /// The `users` relation `search_path` resolves on `connection` (nil when there is none): its qualified name, its
    /// `relkind` and its columns.
    static func describe(
        connection: PostgresConnection, logger: Logger, inCurrentSchemaOnly: Bool = false
    ) async throws -> (name: String, kind: String, columns: [Column])? {
        let target =
            inCurrentSchemaOnly
            ? "(select c.oid from pg_class c join pg_namespace n on n.oid = c.relnamespace where n.nspname = current_schema() and c.relname = 'users')"
            : "to_regclass('users')"
        let relation = try await connection.run(
            PostgresQuery(
                unsafeSQL: """
                    select n.nspname || '.' || c.relname, c.relkind::text from pg_class c \
                    join pg_namespace n on n.oid = c.relnamespace where c.oid = \(target)
                    """), logger: logger)
        var found: (String, String)?
        for try await (name, kind) in relation.decode((String, String).self) { found = (name, kind) }
        guard let (name, kind) = found else { return nil }
        let rows = try await connection.run(
            PostgresQuery(
                unsafeSQL: """
                    select a.attname::text, coalesce(b.typname, t.typname)::text, format_type(a.atttypid, a.atttypmod) \
                    from pg_attribute a join pg_type t on t.oid = a.atttypid \
                    left join pg_type b on t.typtype = 'd' and b.oid = t.typbasetype \
                    where a.attrelid = \(target) and a.attnum > 0 and not a.attisdropped order by a.attnum
                    """), logger: logger)
        var columns: [Column] = []
        for try await (column, type, display) in rows.decode((String, String, String).self) {
            columns.append(Column(name: column, typeName: type, displayType: display))
        }
        return (name, kind, columns)
    }

    /// The contract columns the job's UPDATE writes (`SetApply`); it also writes the stores' identifier columns the
    /// relation has (CONTRACT "Whose purchase it is"), checked with them.
    static let writtenColumns = [
        "current_tier", "subscription_status", "subscription_end_date", "grace_period_ends_at", "subscription_source",
        "iap_product_id", "iap_original_transaction_id", "auto_renew", "updated_at",
    ]

    /// Why the `users` relation `search_path` resolves (or the current schema's) cannot take the job's UPDATE, from the
    /// catalog (`pg_relation_is_updatable` / `pg_column_is_updatable`, counting INSTEAD OF triggers); nil when it can.
    static func updateProblem(
        connection: PostgresConnection, logger: Logger, inCurrentSchemaOnly: Bool = false, alsoWritten: [String] = []
    ) async throws -> String? {
        let target =
            inCurrentSchemaOnly
            ? "(select c.oid from pg_class c join pg_namespace n on n.oid = c.relnamespace where n.nspname = current_schema() and c.relname = 'users')"
            : "to_regclass('users')"
        var binds = PostgresBindings()
        binds.append(writtenColumns + alsoWritten)
        // An enabled INSTEAD OF UPDATE row trigger (tgtype bits: row 1, update 16, instead 64) takes every column;
        // `pg_column_is_updatable` would also ask for DELETE, which the job never runs, so it is asked only without one.
        let sql =
            "select (pg_relation_is_updatable(c.oid, true) & 4) <> 0, exists (select 1 from pg_trigger t where "
            + "t.tgrelid = c.oid and t.tgtype & 81 = 81 and t.tgenabled <> 'D'), coalesce((select array_agg(a.attname::text "
            + "order by a.attnum) from pg_attribute a where a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped "
            + "and a.attname::text = any($1) and not pg_column_is_updatable(c.oid, a.attnum, false)), '{}') "
            + "from pg_class c where c.oid = \(target)"
        let rows = try await connection.run(PostgresQuery(unsafeSQL: sql, binds: binds), logger: logger)
        for try await (updatable, insteadOfUpdate, columns) in rows.decode((Bool, Bool, [String]).self) {
            if insteadOfUpdate { return nil }
            if !updatable { return "it accepts no UPDATE (not automatically updatable, no INSTEAD OF UPDATE trigger)" }
            if !columns.isEmpty {
                return "its column\(columns.count == 1 ? "" : "s") \(columns.joined(separator: ", ")) cannot be written"
            }
        }
        return nil
    }

    /// `table`, `view`, ... for a `relkind`.
    static func kindName(_ relkind: String) -> String {
        switch relkind {
        case "r", "p": "a table"
        case "v": "a view"
        case "m": "a materialized view"
        case "f": "a foreign table"
        default: "relkind \(relkind)"
        }
    }
}

extension SubscriptionDatabase {
    /// Checks the `users` relation the connection's `search_path` resolves against the contract (CONTRACT "Database")
    /// and returns what the run needs to know about it. Reads only the catalog.
    ///
    /// - Parameter requiredOptional: the identifier columns whose source is configured.
    /// - Parameter writable: also require that the job's UPDATE can write the relation (`run`; not `explain`).
    /// - Throws: `UsersContract.Violation` naming every missing or wrongly typed column (exit 78 for the CLI);
    ///   `DatabaseError.schemaMissing` when there is no `users` at all.
    public func checkUsers(requiring requiredOptional: Set<String>, writable: Bool = true) async throws -> UsersRelation {
        let described = try await run("check users columns") {
            try await session.withTransaction { connection in
                try await UsersContract.describe(connection: connection, logger: logger)
            }
        }
        guard let described else { throw DatabaseError.schemaMissing(table: "users") }
        let relation = "\(described.name), \(UsersContract.kindName(described.kind))"
        if let violation = UsersContract.violation(
            relation: relation, columns: described.columns, requiredOptional: requiredOptional)
        {
            throw violation
        }
        if writable {
            let problem = try await run("check users is updatable") {
                try await session.withTransaction {
                    try await UsersContract.updateProblem(
                        connection: $0, logger: logger, alsoWritten: users.identifierColumns.map(\.name))
                }
            }
            if let problem { throw UsersContract.Violation(relation: relation, missing: [], wrongType: [], notUpdatable: problem) }
        }
        let textColumns = Set(described.columns.filter { UsersContract.ColumnType.text.accepts($0.typeName) }.map(\.name))
        return UsersRelation(
            isTable: described.kind == "r" || described.kind == "p",
            optionalColumns: Set(users.identifierColumns.map(\.name).filter(textColumns.contains)),
            identifierColumns: users.identifierColumns, hasAccountToken: textColumns.contains("account_token"))
    }

    /// This store, reading and writing `users` as `relation` describes (from `checkUsers`).
    public func with(users relation: UsersRelation) -> SubscriptionDatabase {
        var copy = self
        copy.users = relation
        return copy
    }
}
