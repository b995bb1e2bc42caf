import Foundation
import Logging
import PostgresNIO
import StoreSimulator
import SubreconStore
import Testing

/// The integration suites' PostgreSQL: `SUBRECON_TEST_DATABASE_URL`, skipped when absent unless
/// `SUBRECON_REQUIRE_DATABASE=1` (as `scripts/test` sets). Each test gets a fresh schema, dropped afterwards.
enum OpsDatabase {
    static let environment = ProcessInfo.processInfo.environment
    static let url = environment["SUBRECON_TEST_DATABASE_URL"].flatMap { $0.isEmpty ? nil : $0 }
    static let isEnabled = url != nil || environment["SUBRECON_REQUIRE_DATABASE"] == "1"

    struct Missing: Error, CustomStringConvertible {
        var description: String { "SUBRECON_REQUIRE_DATABASE=1 but SUBRECON_TEST_DATABASE_URL is not set" }
    }

    /// Runs `body` with the `DATABASE_URL` of a fresh schema and a store on it.
    static func withSchema<T>(_ body: (_ databaseURL: String, _ store: SubscriptionStore) async throws -> T) async throws -> T {
        guard let url else { throw Missing() }
        let schema = "ops_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(16)
        let schemaURL = url + (url.contains("?") ? "&" : "?") + "search_path=\(schema)"
        let settings = try DatabaseSettings(environment: ["DATABASE_URL": schemaURL])
        let client = PostgresClient(configuration: settings.clientConfiguration(maximumConnections: 4))
        let store = SubscriptionStore(client: client, logger: Logger(label: "subrecon.ops.tests"))
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await client.run() }
            defer { group.cancelAll() }
            do {
                try await client.query("create schema \(unescaped: schema)")
                let result = try await body(schemaURL, store)
                try await client.query("drop schema \(unescaped: schema) cascade")
                return result
            } catch {
                _ = try? await client.query("drop schema \(unescaped: schema) cascade")
                throw error
            }
        }
    }
}

/// A Pushgateway stand-in on the loopback simulator server: records every PUT under `/metrics/` and answers 200.
actor RecordingPushgateway: SimulatorRoute {
    private(set) var requests: [SimulatorRequest] = []

    nonisolated func handle(_ request: SimulatorRequest) async -> SimulatorResponse? {
        guard request.path.hasPrefix("/metrics/") else { return nil }
        await record(request)
        return request.method == "PUT" ? SimulatorResponse(status: 200) : SimulatorResponse(status: 405)
    }

    private func record(_ request: SimulatorRequest) { requests.append(request) }
}
