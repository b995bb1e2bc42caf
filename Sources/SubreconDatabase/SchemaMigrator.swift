import Logging
import PostgresNIO
import SubreconPorts

/// One schema migration: a version and the statements that bring the schema to it.
public struct SchemaMigration: Sendable {
    public var version: Int
    public var name: String
    /// Run in order inside the migration transaction; one statement each (extended protocol).
    public var statements: [String]
    /// Statements on `users` itself, run before `statements` and only when `users` is subrecon's own: an app's
    /// relation (CONTRACT "Database") is never altered or indexed. Never an index (`usersIndexes`). On a `users`
    /// that existed before this `migrate`, they run in a transaction of their own that waits for its lock briefly.
    public var ownUsersStatements: [String]
    /// Indexes on subrecon's own `users`, built after `ownUsersStatements`: inside the migration transaction while
    /// `users` is new (created by this very `migrate`), else concurrently (docs/CONTRACT.md, "Database").
    public var usersIndexes: [UsersIndex]

    public init(
        version: Int, name: String, ownUsersStatements: [String] = [], usersIndexes: [UsersIndex] = [], statements: [String]
    ) {
        self.version = version
        self.name = name
        self.ownUsersStatements = ownUsersStatements
        self.usersIndexes = usersIndexes
        self.statements = statements
    }

    /// Whether it changes subrecon's own `users` (nothing of it runs on an app's relation).
    var changesUsers: Bool { !ownUsersStatements.isEmpty || !usersIndexes.isEmpty }
}

/// An index on subrecon's own `users`: its name (unqualified, never quoted) and what follows `on users`.
public struct UsersIndex: Sendable, Hashable {
    public var name: String
    /// The columns and the predicate: `(stripe_customer_id) where stripe_customer_id is not null`.
    public var definition: String

    public init(_ name: String, _ definition: String) {
        self.name = name
        self.definition = definition
    }

    /// `create index [concurrently] if not exists NAME on TABLE DEFINITION`.
    func sql(on table: String, concurrently: Bool) -> String {
        "create index \(concurrently ? "concurrently " : "")if not exists \(name) on \(table) \(definition)"
    }
}

/// The database's schema is at a version newer than this build knows: a newer subrecon migrated it and this older
/// binary was deployed again (a roll-back). `migrate`, `run` and `explain` refuse it with this one line, exit 78,
/// before anything is touched (docs/CONTRACT.md, "Database").
public struct SchemaNewerThanBinary: Error, Sendable, Hashable, CustomStringConvertible {
    /// The highest version recorded in `subrecon_schema_migrations`.
    public var databaseVersion: Int
    /// The highest version this build knows (`SchemaMigrator.latestVersion`).
    public var binaryVersion: Int

    public init(databaseVersion: Int, binaryVersion: Int) {
        self.databaseVersion = databaseVersion
        self.binaryVersion = binaryVersion
    }

    public var description: String {
        "database schema is at version \(databaseVersion), newer than this subrecon knows (version \(binaryVersion)): "
            + "a newer release migrated it (a rolled-back deploy?); run that release or a later one; nothing was touched"
    }
}

/// Creates or upgrades subrecon's tables in the connection's current schema (unqualified names).
///
/// Applied versions are recorded in `subrecon_schema_migrations`. A `migrate` holds a transaction-scoped advisory
/// lock keyed by `current_schema()` throughout, in a transaction of its own on a connection of its own
/// (`withMigrationLock`), so concurrent migrators serialise and the second one finds nothing to do. The pending
/// migrations run in one transaction on another connection, except those that change subrecon's own `users` once it
/// holds the app's rows: each of those (and every one after it) alters `users` in a short transaction, builds its
/// indexes concurrently outside any transaction, and is recorded only then (`applyOnLiveUsers`; docs/CONTRACT.md,
/// "Database"). Append new migrations to `SchemaMigrator.migrations`; never edit an applied one.
///
/// `users` may be the app's own relation (CONTRACT "Database"): when migration 1 runs and a relation named `users`
/// already exists in the current schema (table or view), subrecon records it as the app's (`subrecon_settings`
/// row `users_owner` = `app`) and never runs a migration's `ownUsersStatements` on it. Databases migrated before
/// this record existed count as subrecon's. An app's relation is checked against the contract before anything is
/// written (`UsersContract.Violation`, the transaction rolls back: nothing created).
public struct SchemaMigrator: Sendable {
    public let migrations: [SchemaMigration]
    /// How long one concurrent index build (or drop) on `users` may run, and how long a `migrate` waits for another
    /// one's lock; nil: the longer of 600 s and the session's statement timeout, none when that timeout is off
    /// (docs/CONTRACT.md, "Database").
    public let indexBuildTimeout: Duration?

    public init(migrations: [SchemaMigration] = SchemaMigrator.migrations, indexBuildTimeout: Duration? = nil) {
        self.migrations = migrations
        self.indexBuildTimeout = indexBuildTimeout
    }

    /// The migration transactions' waits: DDL on subrecon's own tables waits for their locks up to two minutes (a
    /// night still running holds them) rather than the session's short lock_timeout.
    static let transactionWaits = ["lock_timeout": "120s", "statement_timeout": "600s"]

    /// The highest version this build knows.
    public var latestVersion: Int { migrations.map(\.version).max() ?? 0 }

    /// Applies the pending migrations; returns the versions applied now (empty when already up to date).
    ///
    /// The recorded versions are read first: a schema that is already current is a no-op that only reads (the
    /// versions, the app's `users` against the contract) and so needs no privilege to create or alter anything
    /// (docs/CONTRACT.md, "What `run` checks first").
    ///
    /// - Parameter requiredOptional: optional `users` columns whose source is configured (checked on an app's relation).
    @discardableResult
    public func migrate(client: SessionPool, logger: Logger, requiring requiredOptional: Set<String> = []) async throws -> [Int] {
        let recorded = try await appliedVersions(client: client, logger: logger)
        try refuseNewer(recorded)
        if !recorded.isEmpty, migrations.allSatisfy({ recorded.contains($0.version) }) {
            try await checkCurrentUsers(client: client, logger: logger, requiring: requiredOptional)
            return []
        }
        do {
            // The lock is held on a connection of its own for the whole migrate, index builds included; the work runs
            // on others (docs/CONTRACT.md, "Database").
            return try await withMigrationLock(client: client, logger: logger) { lock in
                let plan = try await applyInTransaction(client: client, logger: logger, requiring: requiredOptional)
                var now = plan.applied
                for migration in plan.deferred {
                    try await applyOnLiveUsers(migration, schema: plan.schema, lock: lock, client: client, logger: logger)
                    now.append(migration.version)
                }
                return now
            }
        } catch let violation as UsersContract.Violation {
            throw violation
        } catch let newer as SchemaNewerThanBinary {
            throw newer
        } catch {
            throw DatabaseError.wrap(error, operation: "migrate")
        }
    }

    /// What the first migration transaction did, and what it left to `applyOnLiveUsers`.
    struct InlinePlan: Sendable {
        /// `quote_ident(current_schema())`: where the tables are.
        var schema: String
        var applied: [Int] = []
        /// The first pending migration that changes a `users` that existed before this `migrate`, and every one after
        /// it, in order.
        var deferred: [SchemaMigration] = []
    }

    /// The migration transaction: the pending migrations, in order, up to the first that changes subrecon's own
    /// `users` when that table already existed (it may be large and written by the app all night): that one and the
    /// rest are left to `applyOnLiveUsers`. A fresh schema is migrated whole here, in one transaction.
    func applyInTransaction(client: SessionPool, logger: Logger, requiring requiredOptional: Set<String>) async throws -> InlinePlan {
        // The migration's own transaction gets the session's settings and schema check like every unit of work
        // (docs/CONTRACT.md, "The session"): its tables are created in the schema asked for, never elsewhere.
        try await client.withTransaction(overriding: Self.transactionWaits) { connection in
            try await connection.run(
                """
                create table if not exists subrecon_schema_migrations (
                    version integer primary key,
                    name text,
                    applied_at timestamptz not null default now()
                )
                """, logger: logger)
            let applied = try await Self.appliedVersions(connection: connection, logger: logger)
            try refuseNewer(applied)
            let owner = try await Self.usersOwner(
                connection: connection, logger: logger, initialApplied: applied.contains(1), requiring: requiredOptional)
            var plan = InlinePlan(schema: try await Self.quotedCurrentSchema(connection: connection, logger: logger))
            let liveUsers = owner == .subrecon && applied.contains(1)
            for migration in migrations.sorted(by: { $0.version < $1.version }) where !applied.contains(migration.version) {
                if !plan.deferred.isEmpty || (liveUsers && migration.changesUsers) {
                    plan.deferred.append(migration)
                } else {
                    try await Self.apply(migration, toUsers: owner == .subrecon, on: connection, logger: logger)
                    plan.applied.append(migration.version)
                }
            }
            return plan
        }
    }

    /// A migration's statements inside the transaction `connection` is in, its changes to `users` too when `toUsers`
    /// (indexes built plainly: `users` is new), then its version recorded.
    static func apply(_ migration: SchemaMigration, toUsers: Bool, on connection: PostgresConnection, logger: Logger) async throws {
        let users = toUsers ? migration.ownUsersStatements + migration.usersIndexes.map { $0.sql(on: "users", concurrently: false) } : []
        for statement in users + migration.statements {
            try await connection.run(PostgresQuery(unsafeSQL: statement), logger: logger)
        }
        try await connection.run(
            "insert into subrecon_schema_migrations (version, name) values (\(migration.version), \(migration.name))",
            logger: logger)
        logger.info(
            "applied schema migration",
            metadata: ["db.migration.version": "\(migration.version)", "db.migration.name": "\(migration.name)"])
    }

    static func quotedCurrentSchema(connection: PostgresConnection, logger: Logger) async throws -> String {
        var schema: String?
        for try await name in try await connection.run("select quote_ident(current_schema())", logger: logger).decode(String.self) {
            schema = name
        }
        guard let schema else { throw DatabaseError.database(operation: "migrate", reason: "the session has no current schema") }
        return schema
    }

    /// Whose `users` is in the current schema.
    public enum UsersOwner: String, Sendable {
        /// Created by migration 1 (or a database migrated before ownership was recorded).
        case subrecon
        /// Existed before migration 1: never altered or indexed by subrecon.
        case app
    }

    /// Reads (or, before migration 1, decides and records) who owns `users`; checks an app's relation against the
    /// contract before anything else runs. Inside the migration transaction.
    static func usersOwner(
        connection: PostgresConnection, logger: Logger, initialApplied: Bool, requiring requiredOptional: Set<String>
    ) async throws -> UsersOwner {
        try await connection.run(
            "create table if not exists subrecon_settings (key text primary key, value text not null)", logger: logger)
        var recorded: String?
        for try await value in try await connection.run(
            "select value from subrecon_settings where key = 'users_owner'", logger: logger
        ).decode(String.self) { recorded = value }
        let existing = try await UsersContract.describe(connection: connection, logger: logger, inCurrentSchemaOnly: true)
        let owner: UsersOwner
        if let recorded {
            owner = UsersOwner(rawValue: recorded) ?? .app
        } else if initialApplied {
            owner = .subrecon
        } else {
            if existing == nil, let elsewhere = try await UsersContract.describe(connection: connection, logger: logger) {
                // Creating subrecon's own users here would hide the app's from every query: refuse.
                throw UsersContract.Violation(
                    relation: "\(elsewhere.name), \(UsersContract.kindName(elsewhere.kind))", missing: [], wrongType: [],
                    shadowed: true)
            }
            owner = existing == nil ? .subrecon : .app
            try await connection.run(
                "insert into subrecon_settings (key, value) values ('users_owner', \(owner.rawValue))", logger: logger)
            logger.info(
                "users relation owner recorded",
                metadata: ["db.users.owner": "\(owner.rawValue)", "db.users.relation": "\(existing?.name ?? "created by subrecon")"])
        }
        if owner == .app { try await checkAppUsers(connection: connection, logger: logger, requiring: requiredOptional) }
        return owner
    }

    /// On a current schema, checks an app's `users` against the contract as `migrate` would, reading only.
    func checkCurrentUsers(client: SessionPool, logger: Logger, requiring requiredOptional: Set<String>) async throws {
        do {
            try await client.withTransaction { connection in
                var owner: String?
                let sql = "select value from subrecon_settings where key = 'users_owner'"
                let exists = try await connection.run("select to_regclass('subrecon_settings') is not null", logger: logger)
                for try await flag in exists.decode(Bool.self) where flag {
                    for try await value in try await connection.run(PostgresQuery(unsafeSQL: sql), logger: logger).decode(String.self) {
                        owner = value
                    }
                }
                guard owner == UsersOwner.app.rawValue else { return }
                try await Self.checkAppUsers(connection: connection, logger: logger, requiring: requiredOptional)
            }
        } catch let violation as UsersContract.Violation {
            throw violation
        } catch {
            throw DatabaseError.wrap(error, operation: "migrate (check users)")
        }
    }

    /// An app's `users` in the current schema against the contract: its columns and whether it takes the job's UPDATE.
    static func checkAppUsers(connection: PostgresConnection, logger: Logger, requiring requiredOptional: Set<String>) async throws {
        let existing = try await UsersContract.describe(connection: connection, logger: logger, inCurrentSchemaOnly: true)
        guard let existing else { throw DatabaseError.schemaMissing(table: "users") }
        let relation = "\(existing.name), \(UsersContract.kindName(existing.kind))"
        if let violation = UsersContract.violation(relation: relation, columns: existing.columns, requiredOptional: requiredOptional) {
            throw violation
        }
        if let problem = try await UsersContract.updateProblem(connection: connection, logger: logger, inCurrentSchemaOnly: true) {
            throw UsersContract.Violation(relation: relation, missing: [], wrongType: [], notUpdatable: problem)
        }
    }

    /// The recorded versions of a pool whose connections carry their session in their startup parameters.
    package func appliedVersions(client: PostgresClient, logger: Logger) async throws -> Set<Int> {
        try await appliedVersions(client: SessionPool(client: client, setup: nil), logger: logger)
    }

    /// The recorded versions; empty when the migrations table does not exist yet.
    package func appliedVersions(client: SessionPool, logger: Logger) async throws -> Set<Int> {
        do {
            return try await client.withTransaction { connection in
                let rows = try await connection.run(
                    "select to_regclass('subrecon_schema_migrations') is not null", logger: logger)
                var exists = false
                for try await flag in rows.decode(Bool.self) { exists = flag }
                guard exists else { return [] }
                return try await Self.appliedVersions(connection: connection, logger: logger)
            }
        } catch {
            throw DatabaseError.wrap(error, operation: "read schema version")
        }
    }

    /// Throws `DatabaseError.schemaMissing` / `.schemaOutdated` unless every known migration is applied, and
    /// `SchemaNewerThanBinary` when the database records a version this build does not know.
    public func requireCurrent(client: SessionPool, logger: Logger) async throws {
        let applied = try await appliedVersions(client: client, logger: logger)
        if applied.isEmpty { throw DatabaseError.schemaMissing(table: "subrecon_schema_migrations") }
        try refuseNewer(applied)
        if let missing = migrations.map(\.version).filter({ !applied.contains($0) }).min() {
            throw DatabaseError.schemaOutdated(current: missing - 1, required: latestVersion)
        }
    }

    /// A database migrated by a newer release than this one (a rolled-back deploy) is refused before anything is
    /// touched: this build would write tables whose meaning it does not know (docs/CONTRACT.md, "Database").
    func refuseNewer(_ applied: Set<Int>) throws(SchemaNewerThanBinary) {
        guard let newest = applied.max(), newest > latestVersion else { return }
        throw SchemaNewerThanBinary(databaseVersion: newest, binaryVersion: latestVersion)
    }

    static func appliedVersions(connection: PostgresConnection, logger: Logger) async throws -> Set<Int> {
        var versions = Set<Int>()
        let rows = try await connection.run("select version from subrecon_schema_migrations", logger: logger)
        for try await version in rows.decode(Int.self) { versions.insert(version) }
        return versions
    }
}
