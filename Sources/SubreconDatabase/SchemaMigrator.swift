import Logging
import PostgresNIO

/// One schema migration: a version and the statements that bring the schema to it.
public struct SchemaMigration: Sendable {
    public var version: Int
    public var name: String
    /// Run in order inside the migration transaction; one statement each (extended protocol).
    public var statements: [String]
    /// Statements on `users` itself, run before `statements` and only when `users` is subrecon's own: an app's
    /// relation (CONTRACT "Database") is never altered or indexed.
    public var ownUsersStatements: [String]

    public init(version: Int, name: String, ownUsersStatements: [String] = [], statements: [String]) {
        self.version = version
        self.name = name
        self.ownUsersStatements = ownUsersStatements
        self.statements = statements
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
/// Applied versions are recorded in `subrecon_schema_migrations`. All pending migrations run in one transaction
/// under a transaction-scoped advisory lock keyed by `current_schema()`, so concurrent migrators serialise and the
/// second one finds nothing to do. Append new migrations to `SchemaMigrator.migrations`; never edit an applied one.
///
/// `users` may be the app's own relation (CONTRACT "Database"): when migration 1 runs and a relation named `users`
/// already exists in the current schema (table or view), subrecon records it as the app's (`subrecon_settings`
/// row `users_owner` = `app`) and never runs a migration's `ownUsersStatements` on it. Databases migrated before
/// this record existed count as subrecon's. An app's relation is checked against the contract before anything is
/// written (`UsersContract.Violation`, the transaction rolls back: nothing created).
public struct SchemaMigrator: Sendable {
    public let migrations: [SchemaMigration]

    public init(migrations: [SchemaMigration] = SchemaMigrator.migrations) {
        self.migrations = migrations
    }

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
            // The migration's own transaction gets the session's settings and schema check like every unit of work
            // (docs/CONTRACT.md, "The session"): its tables are created in the schema asked for, never elsewhere.
            // Another migrator of this schema may hold the lock while it migrates: wait for it, up to two minutes,
            // rather than the session's short lock_timeout (docs/CONTRACT.md, "Database").
            let waits = ["lock_timeout": "120s", "statement_timeout": "600s"]
            return try await client.withTransaction(overriding: waits) { connection in
                try await connection.run(
                    "select pg_advisory_xact_lock(hashtext('subrecon.migrate'), hashtext(current_schema()))",
                    logger: logger)
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
                var now: [Int] = []
                for migration in migrations.sorted(by: { $0.version < $1.version })
                where !applied.contains(migration.version) {
                    for statement in owner == .subrecon ? migration.ownUsersStatements : [] {
                        try await connection.run(PostgresQuery(unsafeSQL: statement), logger: logger)
                    }
                    for statement in migration.statements {
                        try await connection.run(PostgresQuery(unsafeSQL: statement), logger: logger)
                    }
                    try await connection.run(
                        "insert into subrecon_schema_migrations (version, name) values (\(migration.version), \(migration.name))",
                        logger: logger)
                    logger.info(
                        "applied schema migration",
                        metadata: ["db.migration.version": "\(migration.version)", "db.migration.name": "\(migration.name)"])
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

extension SchemaMigrator {
    /// subrecon's migrations, in order. Append; never rewrite an applied one.
    public static let migrations: [SchemaMigration] = [
        SchemaMigration(
            version: 1, name: "initial tables (CONTRACT 'Database') and candidate-scan indexes",
            ownUsersStatements: [
                """
                create table if not exists users (
                    id text primary key,
                    current_tier integer not null default 0,
                    subscription_status text not null default 'none',
                    subscription_end_date timestamptz null,
                    grace_period_ends_at timestamptz null,
                    subscription_source text null,
                    iap_product_id text null,
                    iap_original_transaction_id text null,
                    auto_renew boolean null,
                    updated_at timestamptz not null default now()
                )
                """,
                // CONTRACT "Which users a run asks about" rule 1: paid rows with an end date.
                """
                create index if not exists users_paid_with_end_idx on users (id)
                    where current_tier > 0 and subscription_end_date is not null
                """,
                // CONTRACT "Which users a run asks about" rule 2: billing issue.
                """
                create index if not exists users_billing_issue_idx on users (id)
                    where subscription_status = 'billing_issue'
                """,
                // CONTRACT "Which users a run asks about" rule 3: recently lapsed, by end date.
                """
                create index if not exists users_lapsed_end_idx on users (subscription_end_date, id)
                    where subscription_status in ('expired', 'canceled', 'refunded')
                """,
            ],
            statements: [
                """
                create table if not exists product_tiers (
                    product_id text primary key,
                    tier integer not null,
                    entitlement text
                )
                """,
                """
                create table if not exists push_intents (
                    id bigserial primary key,
                    user_id text not null,
                    kind text not null,
                    dedupe_key text not null unique,
                    payload jsonb not null,
                    run_id text,
                    created_at timestamptz not null default now(),
                    sent_at timestamptz null
                )
                """,
                "create index if not exists push_intents_unsent_idx on push_intents (id) where sent_at is null",
                """
                create table if not exists reconcile_runs (
                    id text primary key,
                    mode text not null,
                    as_of timestamptz not null,
                    shard_index integer not null default 0,
                    shard_count integer not null default 1,
                    dry_run boolean not null default false,
                    status text not null default 'running'
                        check (status in ('running', 'completed', 'valve_tripped', 'failed')),
                    started_at timestamptz not null default now(),
                    finished_at timestamptz null,
                    counts jsonb not null default '{}'::jsonb,
                    options jsonb not null default '{}'::jsonb
                )
                """,
                "create index if not exists reconcile_runs_started_idx on reconcile_runs (started_at desc)",
                """
                create table if not exists reconcile_changes (
                    id bigserial primary key,
                    run_id text not null,
                    user_id text not null,
                    before jsonb not null,
                    after jsonb not null,
                    action text not null,
                    drift text[] not null default '{}',
                    created_at timestamptz not null default now()
                )
                """,
                "create index if not exists reconcile_changes_run_idx on reconcile_changes (run_id)",
                "create index if not exists reconcile_changes_user_idx on reconcile_changes (user_id, created_at)",
            ]),
        SchemaMigration(
            version: 2, name: "candidate scan: lapsed users in id order (one ordered index scan per candidate rule)",
            ownUsersStatements: [
                """
                create index if not exists users_lapsed_id_idx on users (id)
                    where subscription_status in ('expired', 'canceled', 'refunded')
                """
            ], statements: []),
        SchemaMigration(
            version: 3, name: "per-run verdict ledger and run progress (resume, report re-rendering)",
            statements: [
                """
                create table if not exists reconcile_verdicts (
                    run_id text not null,
                    seq bigint not null,
                    user_id text not null,
                    verdict jsonb not null,
                    outcome text,
                    queued_intents jsonb,
                    primary key (run_id, seq)
                )
                """,
                "create unique index if not exists reconcile_verdicts_run_user on reconcile_verdicts (run_id, user_id)",
                "alter table reconcile_runs add column if not exists validated bigint not null default 0",
                "alter table reconcile_runs add column if not exists scan_cursor text",
                "alter table reconcile_runs add column if not exists scan_done boolean not null default false",
                "alter table reconcile_runs add column if not exists held_tier integer not null default 0",
                "alter table reconcile_runs add column if not exists would_lose_tier integer not null default 0",
                "alter table reconcile_runs add column if not exists user_errors integer not null default 0",
                "alter table reconcile_runs add column if not exists selection jsonb",
            ]),
        SchemaMigration(
            version: 4, name: "optional legacy App Store receipts (verifyReceipt bridge)",
            statements: [
                """
                create table if not exists apple_receipts (
                    user_id text primary key,
                    receipt_data text not null,
                    updated_at timestamptz not null default now()
                )
                """
            ]),
        SchemaMigration(
            version: 5, name: "store identifiers for Stripe and Google Play (CONTRACT 'Database')",
            ownUsersStatements: [
                "alter table users add column if not exists stripe_customer_id text null",
                "alter table users add column if not exists google_purchase_token text null",
            ], statements: []),
        SchemaMigration(
            version: 6, name: "per-run candidates named by store feeds and the sweep, joined into the keyset scan",
            statements: [
                """
                create table if not exists reconcile_run_candidates (
                    run_id text not null,
                    user_id text not null,
                    reasons text[] not null,
                    primary key (run_id, user_id)
                )
                """
            ]),
        SchemaMigration(
            version: 7, name: "refunds seen, once per store transaction, for the refund review (CONTRACT 'Finance figures')",
            statements: [
                """
                create table if not exists refunds_seen (
                    store text not null,
                    transaction_id text not null,
                    user_id text not null,
                    refunded_at timestamptz not null,
                    amount text null,
                    currency text null,
                    run_id text not null,
                    primary key (store, transaction_id)
                )
                """,
                "create index if not exists refunds_seen_user_idx on refunds_seen (user_id, refunded_at)",
                "create index if not exists refunds_seen_refunded_at_idx on refunds_seen (refunded_at)",
            ]),
        // The windows each store feed was read over, per shard (CONTRACT "Hostile answers and bounded work").
        SchemaMigration(
            version: 8, name: "store feed windows read to their end, per feed and shard (CONTRACT 'Hostile answers and bounded work')",
            statements: [
                """
                create table if not exists reconcile_feed_windows (
                    run_id text not null,
                    feed text not null,
                    shard_index integer not null,
                    shard_count integer not null,
                    since timestamptz not null,
                    until timestamptz not null check (until >= since),
                    complete boolean not null default false,
                    started_at timestamptz not null default now(),
                    read_at timestamptz null,
                    primary key (run_id, feed)
                )
                """,
                "create index if not exists reconcile_feed_windows_feed_idx on reconcile_feed_windows (feed, shard_index, shard_count, until)",
            ]),
        // Whose purchase it is (CONTRACT "Database" `account_token`, 5.10 links, 5.6 `orphans.csv`).
        SchemaMigration(
            version: 9, name: "account_token, tonight's purchase links and the orphans kept across nights",
            ownUsersStatements: [
                "alter table users add column if not exists account_token text null",
                "create index if not exists users_account_token_idx on users (account_token) where account_token is not null",
            ],
            statements: [
                """
                create table if not exists reconcile_run_links (
                    run_id text not null,
                    user_id text not null,
                    origin text not null,
                    identifier text not null,
                    primary key (run_id, user_id, origin)
                )
                """,
                """
                create table if not exists reconcile_orphans (
                    origin text not null,
                    identifier text not null,
                    product_id text not null,
                    status text not null,
                    end_date timestamptz null,
                    account_token text null,
                    price_amount numeric null,
                    price_currency text null,
                    first_seen timestamptz not null,
                    last_seen timestamptz not null,
                    last_run_id text not null,
                    primary key (origin, identifier)
                )
                """,
                "create index if not exists reconcile_orphans_last_seen_idx on reconcile_orphans (last_seen)",
            ]),
        // docs/CONTRACT.md "Reports": `report RUN_ID` renders a run's folder byte for byte, also after later nights.
        SchemaMigration(
            version: 10, name: "each run's report inputs later nights move: orphans.csv, refund_review.csv, the charted history",
            statements: [
                """
                create table if not exists reconcile_run_reports (
                    run_id text not null,
                    name text not null,
                    content text not null,
                    primary key (run_id, name)
                )
                """
            ]),
        // docs/own-tables.md "Indexes the team may want": who holds a purchase is asked per Apple user and per feed page;
        // without these a night reads the whole table once per Apple user.
        SchemaMigration(
            version: 11, name: "indexes on the store identifier columns (who holds a purchase)",
            ownUsersStatements: [
                """
                create index if not exists users_iap_original_transaction_idx on users (iap_original_transaction_id)
                    where iap_original_transaction_id is not null
                """,
                """
                create index if not exists users_stripe_customer_idx on users (stripe_customer_id)
                    where stripe_customer_id is not null
                """,
                """
                create index if not exists users_google_purchase_token_idx on users (google_purchase_token)
                    where google_purchase_token is not null
                """,
            ],
            statements: []),
    ]
}
