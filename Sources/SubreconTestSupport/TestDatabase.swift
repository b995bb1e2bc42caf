import Foundation
import Logging
import PostgresNIO
import SubreconCore
import SubreconDatabase
import SubreconPorts
import SubreconTestKit
import Testing

/// The real PostgreSQL every database suite uses: `SUBRECON_TEST_DATABASE_URL` (`scripts/test` starts one; alone:
/// `scripts/pg-start /tmp/pg-test 55433`). Missing → the suites are skipped, unless `SUBRECON_REQUIRE_DATABASE=1`
/// (as `scripts/test` sets), when they run and fail.
///
/// The one throwaway-schema helper: each test gets a fresh schema of its own, dropped afterwards.
public enum TestDatabase {
    private static let environment = ProcessInfo.processInfo.environment
    /// `SUBRECON_TEST_DATABASE_URL`, when set and not empty.
    public static let url = environment["SUBRECON_TEST_DATABASE_URL"].flatMap { $0.isEmpty ? nil : $0 }
    /// `SUBRECON_REQUIRE_DATABASE=1`: a missing database fails the suites instead of skipping them.
    public static let required = environment["SUBRECON_REQUIRE_DATABASE"] == "1"
    /// Whether the database suites run (`.enabled(if: TestDatabase.isEnabled, TestDatabase.skipMessage)`).
    public static let isEnabled = url != nil || required
    public static let skipMessage: Comment =
        "SUBRECON_TEST_DATABASE_URL is not set: run scripts/test (it starts a PostgreSQL) or scripts/pg-start /tmp/pg-test 55433"

    /// The suites run (`SUBRECON_REQUIRE_DATABASE=1`) but there is no database to run them against.
    public struct Missing: Error, CustomStringConvertible {
        public var description: String { "SUBRECON_REQUIRE_DATABASE=1 but SUBRECON_TEST_DATABASE_URL is not set" }
    }

    /// Settings for the test server (or the server at `serverURL`), with `search_path` set to `schema` when given.
    public static func settings(schema: String? = nil, serverURL: String? = nil) throws -> DatabaseSettings {
        guard let url = serverURL ?? url else { throw Missing() }
        var settings = try DatabaseSettings(environment: ["DATABASE_URL": url])
        settings.searchPath = schema ?? settings.searchPath
        return settings
    }

    /// Runs `body` in a fresh schema `<prefix><16 hex>` on a running client (migrated when `migrated`); the schema
    /// is dropped afterwards, also when `body` throws. `serverURL` names another server than the test database's
    /// (a suite's own cluster, which it may restart).
    public static func withSchema<T>(
        prefix: String = "t_", migrated: Bool = false, serverURL: String? = nil, _ body: (TestSchema) async throws -> T
    ) async throws -> T {
        guard let url = serverURL ?? url else { throw Missing() }
        let name = prefix + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(16)
        let databaseURL = url + (url.contains("?") ? "&" : "?") + "search_path=\(name)"
        let settings = try settings(schema: name, serverURL: url)
        let client = PostgresClient(configuration: settings.clientConfiguration(maximumConnections: 4, direct: true))
        let store = SubscriptionDatabase(
            client: client, logger: Logger(label: "subrecon.tests.db"), identifierColumns: IdentifierColumn.testColumns)
        let schema = TestSchema(name: name, databaseURL: databaseURL, settings: settings, client: client, db: store)
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await client.run() }
            defer { group.cancelAll() }
            do {
                try await client.query("create schema \(unescaped: name)")
                if migrated { try await store.migrate() }
                let result = try await body(schema)
                try await client.query("drop schema \(unescaped: name) cascade")
                return result
            } catch {
                _ = try? await client.query("drop schema \(unescaped: name) cascade")
                throw error
            }
        }
    }

    /// `withSchema` for the database adapter's suites: a migrated schema unless `migrated: false`.
    public static func withDatabase<T>(
        migrated: Bool = true, _ body: (SubscriptionDatabase, PostgresClient) async throws -> T
    ) async throws -> T {
        try await withSchema(migrated: migrated) { schema in try await body(schema.db, schema.client) }
    }

    /// Runs a query and returns its first value, or nil when it has no rows.
    public static func scalar<T: PostgresDecodable & Sendable>(
        _ client: PostgresClient, _ query: PostgresQuery, as: T.Type
    ) async throws -> T? {
        for try await value in try await client.query(query).decode(T.self) { return value }
        return nil
    }
}

/// One throwaway schema of the test database, as `TestDatabase.withSchema` hands it to a test.
public struct TestSchema: Sendable {
    /// The schema's name (`<prefix><16 hex>`).
    public let name: String
    /// The test server's URL with `search_path=<name>`: the `DATABASE_URL` of a job run in this schema.
    public let databaseURL: String
    /// Settings for the test server with `search_path` set to the schema.
    public let settings: DatabaseSettings
    /// A running client (4 connections) on the schema.
    public let client: PostgresClient
    /// The database adapter on `client`.
    public let db: SubscriptionDatabase
}

extension TestDatabase {
    /// The statements of a SQL script (a file under `docs/`), one each for the extended protocol: split at `;`
    /// outside quotes, `$$` bodies and `--` comments. Comment-only pieces are dropped.
    public static func statements(ofScript script: String) -> [String] {
        var statements: [String] = []
        var current = ""
        var inQuote = false
        var inDollar = false
        var inComment = false
        let characters = Array(script)
        var index = 0
        while index < characters.count {
            let c = characters[index]
            let next: Character? = index + 1 < characters.count ? characters[index + 1] : nil
            if inComment {
                if c == "\n" { inComment = false }
            } else if inQuote {
                current.append(c)
                if c == "'" { inQuote = false }
            } else if inDollar {
                current.append(c)
                if c == "$", next == "$" {
                    current.append("$")
                    index += 1
                    inDollar = false
                }
            } else if c == "-", next == "-" {
                inComment = true
            } else if c == "'" {
                current.append(c)
                inQuote = true
            } else if c == "$", next == "$" {
                current.append("$$")
                index += 1
                inDollar = true
            } else if c == ";" {
                let statement = current.trimmingCharacters(in: .whitespacesAndNewlines)
                if !statement.isEmpty { statements.append(statement) }
                current = ""
            } else {
                current.append(c)
            }
            index += 1
        }
        let last = current.trimmingCharacters(in: .whitespacesAndNewlines)
        if !last.isEmpty { statements.append(last) }
        return statements
    }
}
