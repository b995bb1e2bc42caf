import Foundation
import Logging
import PostgresNIO
import SubreconCore
import SubreconStore
import Testing

/// The real PostgreSQL the integration suites use: `SUBRECON_TEST_DATABASE_URL`
/// (start one with `scripts/pg-start /tmp/pg-store 55433`). Missing → the suites are skipped, unless
/// `SUBRECON_REQUIRE_DATABASE=1`, when they run and fail.
enum TestDatabase {
    static let environment = ProcessInfo.processInfo.environment
    static let url = environment["SUBRECON_TEST_DATABASE_URL"].flatMap { $0.isEmpty ? nil : $0 }
    static let required = environment["SUBRECON_REQUIRE_DATABASE"] == "1"
    static let isEnabled = url != nil || required
    static let skipMessage: Comment =
        "SUBRECON_TEST_DATABASE_URL is not set: start one with scripts/pg-start /tmp/pg-store 55433"

    struct Missing: Error, CustomStringConvertible {
        var description: String { "SUBRECON_REQUIRE_DATABASE=1 but SUBRECON_TEST_DATABASE_URL is not set" }
    }

    /// Settings for the test server, with `search_path` set to `schema` when given.
    static func settings(schema: String? = nil) throws -> DatabaseSettings {
        guard let url else { throw Missing() }
        var settings = try DatabaseSettings(environment: ["DATABASE_URL": url])
        settings.searchPath = schema ?? settings.searchPath
        return settings
    }

    /// Runs `body` with a store whose connections live in a fresh schema `t_<random>`, dropped afterwards.
    static func withStore<T>(
        migrated: Bool = true, _ body: (SubscriptionStore, PostgresClient) async throws -> T
    ) async throws -> T {
        let schema = "t_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(16)
        let settings = try settings(schema: schema)
        let client = PostgresClient(configuration: settings.clientConfiguration(maximumConnections: 4))
        let store = SubscriptionStore(client: client, logger: Logger(label: "subrecon.store.tests"))
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await client.run() }
            defer { group.cancelAll() }
            do {
                try await client.query("create schema \(unescaped: schema)")
                if migrated { try await store.migrate() }
                let result = try await body(store, client)
                try await client.query("drop schema \(unescaped: schema) cascade")
                return result
            } catch {
                _ = try? await client.query("drop schema \(unescaped: schema) cascade")
                throw error
            }
        }
    }

    /// Runs a query and returns its single value.
    static func scalar<T: PostgresDecodable & Sendable>(_ client: PostgresClient, _ query: PostgresQuery, as: T.Type) async throws -> T? {
        for try await value in try await client.query(query).decode(T.self) { return value }
        return nil
    }
}

/// Fixed instants for the scan tables.
enum Fixture {
    static let asOf = ISO8601.date("2025-06-01T00:00:00Z")!
    static func day(_ days: Double) -> Date { asOf.addingTimeInterval(days * 86_400) }
}
