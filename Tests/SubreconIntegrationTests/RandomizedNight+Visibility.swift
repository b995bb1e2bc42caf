import Foundation
import PostgresNIO
import StoreSimulator
import SubreconApp
import SubreconCore
import SubreconJob
import SubreconTestKit
import SubreconTestSupport
import Testing

extension RandomizedNightTests {
    /// The same world through a role that sees only part of `users` (docs/CONTRACT.md, "What run checks first"): one of
    /// the row-level security shapes that admit only some rows, chosen by the night's seed. A night that could not see
    /// or write its users never exits 0: the run is refused (78) before any source is asked, no run is recorded and no
    /// row, audit row or intent changes.
    static func partialVisibility(_ rng: inout SeededRandom, harness h: Harness, replay: String) async throws {
        let shape = rng.pick(PreflightProofTests.admitsSome)
        let auth = "authenticated_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(8)
        try await h.client.query(PostgresQuery(unsafeSQL: "create role \(auth) nologin"))
        let before = try await Self.worldState(h)
        let runs = try await h.count("select count(*)::int from reconcile_runs")
        let asked = await h.revenueCat.counters().totalRequests
        let statements = shape.statements.map { $0.replacingOccurrences(of: "{auth}", with: auth) }
        try await PreflightProofTests.withPolicies(h, statements) { env, role in
            let (status, line) = try await OwnTablesTests.failure {
                _ = try await Commands.run(environment: env, options: h.options { $0.maxDowngradeRatio = 1 }, logger: h.logger)
            }
            print("randomized night: role \(role) under \(shape.name): exit \(status.rawValue)")
            #expect(
                status != .ok && status == .config,
                "\(shape.name): a night that cannot see its users exited \(status) — \(line) — \(replay)")
            #expect(line.contains("row-level security"), "\(shape.name): \(line) — \(replay)")
        }
        #expect(await h.revenueCat.counters().totalRequests == asked, "\(shape.name): no source asked — \(replay)")
        #expect(try await h.count("select count(*)::int from reconcile_runs") == runs, "\(shape.name): no run recorded — \(replay)")
        #expect(try await Self.worldState(h) == before, "\(shape.name): nothing written — \(replay)")
        await OperatorDatabaseTests.dropRole(auth, h.client)
    }

    /// Every row, audit row and intent, as text to compare.
    static func worldState(_ h: Harness) async throws -> [String] {
        var state: [String] = []
        let rows = try await h.client.query(
            """
            select concat('u:', id, ':', current_tier, ':', subscription_status, ':', updated_at::text) from users \
            union all select concat('c:', count(*)) from reconcile_changes union all select concat('p:', count(*)) from push_intents
            """)
        for try await line in rows.decode(String.self) { state.append(line) }
        return state.sorted()
    }
}
