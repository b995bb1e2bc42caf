import Foundation
import Logging
import PostgresNIO
import SubreconCore
import SubreconPorts

/// subrecon's access to PostgreSQL: candidate scan, applying verdicts, runs, the product catalog, shard locks.
///
/// Owns no connections: the caller creates the `PostgresClient` (from `DatabaseSettings.clientConfiguration()`)
/// and keeps its `run()` going in a task for as long as the database is used. Tables are addressed unqualified, so
/// they live in the connection's current schema (`search_path`). Every failure is thrown as a `DatabaseError`.
public struct SubscriptionDatabase: Sendable {
    public let client: PostgresClient
    public let logger: Logger
    /// The pool as the database adapter uses it: each unit of work one transaction, opened with the session's settings
    /// (`SessionSetup`).
    let session: SessionPool
    /// How `users` is read and written: subrecon's own table unless `with(users:)` says otherwise (an app's relation,
    /// detected once per run by `checkUsers`); `account_token` is read and written only once `checkUsers` found it.
    public internal(set) var users: UsersRelation

    /// - Parameter identifierColumns: the stores' identifier columns in `users` (their adapters declare them: the
    ///   composition root's registry), read into `UserRow.identifiers`.
    /// - Parameter session: what each transaction on `client`'s connections gets first (`DatabaseSettings.session`);
    ///   nil when the client's connections carry it as startup parameters (`clientConfiguration(direct: true)`).
    public init(client: PostgresClient, logger: Logger, identifierColumns: [IdentifierColumn] = [], session: SessionSetup? = nil) {
        self.client = client
        self.logger = logger
        self.session = SessionPool(client: client, setup: session)
        // Until `checkUsers` says so (`with(users:)`), the optional `account_token` is not assumed: an app's relation
        // may lack it.
        users = UsersRelation(
            isTable: true, optionalColumns: Set(identifierColumns.map(\.name)), identifierColumns: identifierColumns)
    }

    /// Opens one connection with `settings` and runs one transaction with the session's settings (`SessionSetup`: a
    /// transaction not in the schema asked for is `DatabaseError.schemaNotCurrent`, exit 78), so an unreachable
    /// database is reported at start (`DatabaseError.unreachable` → exit 69) instead of after the pool's retries.
    /// Needs no running client.
    public static func checkReachable(_ settings: DatabaseSettings, logger: Logger) async throws(DatabaseError) {
        let configuration: PostgresConnection.Configuration
        do {
            configuration = try settings.connectionConfiguration()
        } catch {
            throw .rejected(endpoint: settings.endpoint, reason: "cannot set up TLS for sslmode=\(settings.sslMode.rawValue)")
        }
        do {
            let connection = try await PostgresConnection.connect(configuration: configuration, id: 0, logger: logger)
            do {
                try await connection.inTransaction(session: settings.session, logger: logger) { _ in }
            } catch {
                try? await connection.close()
                throw error
            }
            try? await connection.close()
        } catch {
            // A refused chain is read once more to name the cause (docs/CONTRACT.md, "The session").
            if let refusal = CertificateRefusal.refusal(in: error, host: settings.host ?? "", trusted: settings.sslRootCertificatePath) {
                let cause = await CertificateRefusal.diagnosed(refusal, settings: settings).cause
                throw .certificateRefused(endpoint: settings.endpoint, cause: cause)
            }
            let wrapped = DatabaseError.wrap(error, operation: "connect", endpoint: settings.endpoint, settings: settings)
            if case .database(_, let reason) = wrapped {
                throw .unreachable(endpoint: settings.endpoint, reason: reason)
            }
            throw wrapped
        }
    }

    /// Creates or upgrades the schema (`subrecon migrate`); returns the versions applied now. An app's own `users`
    /// lacking a contract column (or `requiredOptional`, the optional ones whose source is configured) throws
    /// `UsersContract.Violation` and nothing is created.
    @discardableResult
    /// On a server that takes no writes, a migration that has work to do is `DatabaseError.readOnly` naming why (a
    /// hot standby, read-only sessions): exit 69, never 75 (docs/CONTRACT.md, "What `run` checks first").
    public func migrate(_ migrator: SchemaMigrator = SchemaMigrator(), requiring requiredOptional: Set<String> = []) async throws -> [Int] {
        do {
            return try await migrator.migrate(client: session, logger: logger, requiring: requiredOptional)
        } catch DatabaseError.readOnly(let operation, let reason) {
            throw DatabaseError.readOnly(operation: operation, reason: (try? await readOnlyState()) ?? reason)
        }
    }

    /// Throws `DatabaseError.schemaMissing` / `.schemaOutdated` unless `subrecon migrate` has run for this build.
    public func requireSchema(_ migrator: SchemaMigrator = SchemaMigrator()) async throws {
        try await migrator.requireCurrent(client: session, logger: logger)
    }

    /// The row of one user, or nil.
    package func user(id: String) async throws -> UserRow? {
        try await run("read user") {
            let sql = "select \(CandidateQuery.userColumns(users)) from users where id = $1"
            var binds = PostgresBindings()
            binds.append(id)
            for try await row in try await session.query(PostgresQuery(unsafeSQL: sql, binds: binds), logger: logger) {
                return try UserRow(postgres: row, columns: users.identifierColumns)
            }
            return nil
        }
    }

    // MARK: Seeding

    /// Inserts users (tests, `subrecon demo`). `updatedAtMicros == 0` means `now()`; any other value is stored
    /// exactly. Fails on an existing id.
    package func insertUsers(_ users: [UserRow]) async throws {
        let identifiers = self.users.identifierColumns
        let account = self.users.hasAccountToken
        let columns = 10 + identifiers.count + (account ? 1 : 0)
        for chunk in stride(from: 0, to: users.count, by: 1000).map({ users[$0..<min($0 + 1000, users.count)] }) {
            var binds = PostgresBindings(capacity: chunk.count * columns)
            var tuples: [String] = []
            for user in chunk {
                let base = binds.count
                binds.append(user.id)
                binds.append(user.currentTier)
                binds.append(user.statusText)
                binds.append(user.endDate.map(Timestamp.init))
                binds.append(user.graceEndsAt.map(Timestamp.init))
                binds.append(user.source)
                binds.append(user.productID)
                binds.append(user.originalTransactionID)
                binds.append(user.autoRenew)
                binds.append(user.updatedAtMicros)
                for column in identifiers { binds.append(user.identifiers[column.origin]) }
                if account { binds.append(user.accountToken) }
                let p: [String] = (1...columns).map { "$\(base + $0)" }
                let first: String = p[0...8].joined(separator: ", ")
                let updated: String = "coalesce(timestamptz 'epoch' + nullif(\(p[9])::bigint, 0) * interval '1 microsecond', now())"
                let rest: String = p[10...].map { ", " + $0 }.joined()
                tuples.append("(" + first + ", " + updated + rest + ")")
            }
            let sql = """
                insert into users (id, current_tier, subscription_status, subscription_end_date, grace_period_ends_at, \
                subscription_source, iap_product_id, iap_original_transaction_id, auto_renew, updated_at\
                \(identifiers.map { ", " + $0.name }.joined())\(account ? ", account_token" : "")) values \
                \(tuples.joined(separator: ", "))
                """
            try await run("insert users") {
                try await session.query(PostgresQuery(unsafeSQL: sql, binds: binds), logger: logger)
            }
        }
    }

    /// Runs `body`, mapping any error to a `DatabaseError` for `operation`.
    @discardableResult
    func run<T>(_ operation: String, _ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch {
            throw DatabaseError.wrap(error, operation: operation)
        }
    }
}
