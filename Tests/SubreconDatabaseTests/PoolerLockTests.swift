import Foundation
import Logging
import SubreconDatabase
import SubreconPorts
import Testing

/// The shard lock behind a stock PgBouncer in transaction mode (docs/CONTRACT.md, "Applying"): a pooler of that
/// mode hands each transaction any server connection, so a session lock would land on a connection the run no
/// longer holds. The lock's transaction stays open, which keeps its server connection: the same shard is turned
/// away, an overlapping layout too, another shard of the layout runs, and the lock is gone after release.
@Suite("Shard locks behind a pooler in transaction mode", .serialized)
struct PoolerLockTests {
    static let transactionPooler = ProcessInfo.processInfo.environment["SUBRECON_TEST_PGBOUNCER_TRANSACTION_URL"]
        .flatMap { $0.isEmpty ? nil : $0 }

    static func lock<T: Sendable>(_ settings: DatabaseSettings, _ shard: ShardSpec, _ body: () async throws -> T) async throws -> T? {
        try await ShardLock.withLock(settings: settings, shard: shard, logger: Logger(label: "pooler-lock"), onLost: { _ in }, body)
    }

    @Test(
        "the same shard is turned away, an overlapping layout too, another shard runs; free again after release",
        .enabled(
            if: transactionPooler != nil,
            "SUBRECON_TEST_PGBOUNCER_TRANSACTION_URL is not set: scripts/test starts a PgBouncer when pgbouncer is installed"))
    func transactionPooling() async throws {
        let settings = try DatabaseSettings(environment: ["DATABASE_URL": try #require(Self.transactionPooler)])
        let shard = ShardSpec(index: 0, count: 2)
        let held: String? = try await Self.lock(settings, shard) {
            // Other clients' transactions go through the pooler meanwhile, as a run's own pool does.
            for _ in 0..<5 {
                let busy: Int? = try await Self.lock(settings, shard) { 1 }
                #expect(busy == nil, "a second run of the same shard")
            }
            let overlapping: Int? = try await Self.lock(settings, .all) { 3 }
            #expect(overlapping == nil, "a layout that overlaps the running one")
            let other: Int? = try await Self.lock(settings, ShardSpec(index: 1, count: 2)) { 2 }
            #expect(other == 2, "another shard of the same layout")
            return "held"
        }
        #expect(held == "held")
        let again: Int? = try await Self.lock(settings, shard) { 4 }
        #expect(again == 4, "released with its transaction")
    }
}
