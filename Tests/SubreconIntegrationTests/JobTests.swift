import Foundation
import PostgresNIO
import StoreSimulator
import SubreconApp
import SubreconCore
import SubreconDatabase
import SubreconJob
import SubreconPorts
import SubreconReports
import Testing

@Suite(
    "The job against PostgreSQL itself: a racing webhook, the shard lock", .serialized, .enabled(if: Harness.isEnabled, Harness.skip),
    .timeLimit(.minutes(5)))
struct JobTests {
    @Test("a row changed between read and write is not overwritten (concurrent_update)")
    func concurrentUpdate() async throws {
        try await Harness.with { h in
            try await h.seed(h.row("c-raced", tier: 1, "active", end: -2), Harness.subscription(expires: -2))
            try await h.seed(h.row("c-calm", tier: 1, "active", end: -2), Harness.subscription(purchased: -2, expires: 28))
            let config = try SubreconConfiguration.load(h.env, requireSource: true)
            let stats = RequestStats()
            let result = try await HTTPClientScope.with { http in
                let real = try StoreFactSource(configuration: config, httpClient: http, stats: stats, logger: h.logger)
                // A webhook renews the user while the job is asking RevenueCat: the webhook must win.
                let source = WebhookDuringFetch(inner: real, userID: "c-raced", client: h.client)
                let job = ReconcileJob(
                    ports: JobPorts(postgres: h.db), source: source, stats: stats, sourcesNote: real.notes, logger: h.logger)
                return try await job.run(h.options { $0.maxDowngradeRatio = 1 }, runID: "run-concurrent")
            }
            let raced = try #require(try await h.user("c-raced"))
            #expect(raced.currentTier == 1 && raced.endDate == Harness.day(30), "the webhook's write survives")
            #expect(try await h.auditRows("c-raced") == 0)
            #expect(try await h.intents("c-raced") == 0)
            let rows = try h.report(result)
            #expect(rows["c-raced"]?.drift.contains("concurrent_update") == true && rows["c-raced"]?.applied == false)
            #expect(rows["c-calm"]?.applied == true)
            #expect(result.summary.concurrentUpdates == 1)
        }
    }

    @Test("a second run of a locked shard exits 4 at once; another shard is free")
    func shardLock() async throws {
        try await Harness.with { h in
            try await h.seed(h.row("l-1", tier: 1, "active", end: -2), Harness.subscription(purchased: -2, expires: 28))
            let outcome: String? = try await h.db.withShardLock(shard: .all) {
                do {
                    _ = try await h.run()
                    return "ran"
                } catch let failure as CommandFailure {
                    return failure.status == .shardLocked ? "locked" : "failed \(failure.status)"
                }
            }
            #expect(outcome == "locked")
            let other = try await h.run { $0.shard = ShardSpec(index: 0, count: 2) }
            #expect(other.exitStatus == .ok)
        }
    }
}

/// A FactSource that writes the row (as a webhook handler would) while the real source is being asked.
struct WebhookDuringFetch: FactSource {
    let inner: StoreFactSource
    let userID: String
    let client: PostgresClient

    func facts(for row: UserRow) async -> SourceFacts {
        if row.id == userID {
            let end = Harness.day(30)
            _ = try? await client.query(
                "update users set subscription_end_date = \(end), updated_at = now() where id = \(userID)")
        }
        return await inner.facts(for: row)
    }
}
