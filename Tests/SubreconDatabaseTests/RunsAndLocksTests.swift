import Foundation
import Logging
import PostgresNIO
import SubreconCore
import SubreconDatabase
import SubreconPorts
import SubreconTestSupport
import Testing

@Suite("Runs, catalog and shard locks (real PostgreSQL)", .serialized, .enabled(if: TestDatabase.isEnabled, TestDatabase.skipMessage))
struct RunsAndLocksTests {
    @Test("a run is recorded at start and finished with its counts")
    func runs() async throws {
        try await TestDatabase.withDatabase { db, _ in
            let older = RunRecord(
                id: "run-a", mode: .nightly, asOf: Fixture.asOf, startedAt: Fixture.day(0), options: ["limit": "10"])
            let newer = RunRecord(
                id: "run-b", mode: .backfill, asOf: Fixture.day(1), shard: ShardSpec(index: 1, count: 4), dryRun: true,
                startedAt: Fixture.day(1))
            try await db.runs.startRun(older)
            try await db.runs.startRun(newer)
            try await db.runs.finishRun(
                id: "run-a", status: .valveTripped, counts: ["downgrade": 7, "candidates": 9], finishedAt: Fixture.day(0.01))

            let runs = try await db.runs.recentRuns(limit: 10)
            #expect(runs.map(\.id) == ["run-b", "run-a"])
            #expect(runs[0] == newer)
            var finished = older
            finished.status = .valveTripped
            finished.counts = ["downgrade": 7, "candidates": 9]
            finished.finishedAt = Fixture.day(0.01)
            #expect(runs[1] == finished)
            #expect(try await db.runs.recentRuns(limit: 1).map(\.id) == ["run-b"])

            let summary = Data(#"{"counts":{"downgrade":2},"mode":"backfill"}"#.utf8)
            try await db.runs.finishRun(id: "run-b", status: .completed, summary: summary, finishedAt: Fixture.day(1.5))
            let stored = try #require(try await db.runs.runCountsJSON(id: "run-b"))
            let object = try #require(try JSONSerialization.jsonObject(with: stored) as? [String: Any])
            #expect(object["mode"] as? String == "backfill")
            #expect((object["counts"] as? [String: Int])?["downgrade"] == 2)
            #expect(try await db.runs.recentRuns(limit: 1).first?.status == .completed)
            await #expect(throws: DatabaseError.self) {
                try await db.runs.finishRun(id: "run-b", status: .failed, summary: Data("[1]".utf8), finishedAt: Fixture.day(2))
            }
        }
    }

    @Test("a run status or mode this build does not know is an error naming it, never read as failed or nightly")
    func unknownStatusOrMode() async throws {
        try await TestDatabase.withDatabase { db, client in
            try await db.runs.startRun(RunRecord(id: "run-odd", mode: .nightly, asOf: Fixture.asOf, startedAt: Fixture.day(0)))
            // Another writer, with the table's check constraint dropped: a status a run read as `failed` could resume.
            try await client.query("alter table reconcile_runs drop constraint if exists reconcile_runs_status_check")
            try await client.query("update reconcile_runs set status = 'paused_by_ops' where id = 'run-odd'")
            for read in ["stored", "recent", "history", "finance"] {
                let error = await #expect(throws: DatabaseError.self, "\(read)") {
                    switch read {
                    case "stored": _ = try await db.runs.storedRun(id: "run-odd")
                    case "recent": _ = try await db.runs.recentRuns(limit: 5)
                    case "history": _ = try await db.history.recentRunSummaries(shard: nil, limit: 5)
                    default: _ = try await db.finance.financeRuns(from: Fixture.day(-1), to: Fixture.day(1))
                    }
                }
                #expect(error?.description.contains("unknown run status paused_by_ops") == true, "\(read): \(String(describing: error))")
            }
            try await client.query("update reconcile_runs set status = 'failed', mode = 'weekly' where id = 'run-odd'")
            let error = await #expect(throws: DatabaseError.self) { _ = try await db.runs.storedRun(id: "run-odd") }
            #expect(error?.description.contains("unknown run mode weekly") == true)
        }
    }

    @Test("products are upserted and loaded as the catalog")
    func catalog() async throws {
        try await TestDatabase.withDatabase { db, _ in
            #expect(try await db.catalog.loadCatalog().entries.isEmpty)
            try await db.catalog.upsertProducts([
                .init(productID: "premium.monthly", tier: 1, entitlement: "premium"), .init(productID: "pro", tier: 1),
            ])
            try await db.catalog.upsertProducts([.init(productID: "pro", tier: 2, entitlement: "pro")])
            let catalog = try await db.catalog.loadCatalog()
            #expect(catalog.tier(for: "premium.monthly") == 1)
            #expect(catalog.tier(for: "pro") == 2)
            #expect(catalog.entries["pro"]?.entitlement == "pro")
            #expect(catalog.tier(for: "unknown") == nil)
        }
    }

    @Test("a second holder of a shard lock is turned away at once and can take it after release")
    func shardLock() async throws {
        try await TestDatabase.withDatabase { db, _ in
            let shard = ShardSpec(index: 0, count: 2)
            let outcome: String? = try await db.withShardLock(shard: shard) {
                let second: Int? = try await db.withShardLock(shard: shard) { 1 }
                #expect(second == nil, "busy while the first holds it")
                let otherShard: Int? = try await db.withShardLock(shard: ShardSpec(index: 1, count: 2)) { 2 }
                #expect(otherShard == 2, "another shard is free")
                return "first"
            }
            #expect(outcome == "first")
            let after: Int? = try await db.withShardLock(shard: shard) { 3 }
            #expect(after == 3, "free again after release")

            // The lock is released when the body throws, too.
            struct Boom: Error {}
            await #expect(throws: Boom.self) {
                let _: Int? = try await db.withShardLock(shard: shard) { throw Boom() }
            }
            let afterThrow: Int? = try await db.withShardLock(shard: shard) { 4 }
            #expect(afterThrow == 4)
        }
    }

    @Test("the lock lives in a transaction its connection keeps open (so a pooler in transaction mode keeps it), ended at release")
    func lockIsTransactionScoped() async throws {
        try await TestDatabase.withDatabase { db, client in
            // This schema's shard locks, held by a backend idle in an open transaction.
            let held = """
                select count(*)::int from pg_locks l join pg_stat_activity a on a.pid = l.pid where l.locktype = 'advisory' \
                and l.granted and a.state = 'idle in transaction' \
                and l.classid = (hashtext('subrecon.shard:' || current_schema())::bigint & 4294967295)::oid
                """
            let during: Int? = try await db.withShardLock(shard: ShardSpec(index: 1, count: 3)) {
                try await TestDatabase.scalar(client, PostgresQuery(unsafeSQL: held), as: Int.self) ?? -1
            }
            #expect(during == 1, "the lock's connection is idle in its open transaction")
            let after = try await TestDatabase.scalar(client, PostgresQuery(unsafeSQL: held), as: Int.self)
            #expect(after == 0, "nothing outlives the release")
        }
    }

    @Test("shard locks in different schemas do not collide")
    func schemasIsolated() async throws {
        try await TestDatabase.withDatabase { first, _ in
            try await TestDatabase.withDatabase { second, _ in
                let outcome: Int? =
                    try await first.withShardLock(shard: .all) {
                        try await second.withShardLock(shard: .all) { 5 }
                    } ?? nil
                #expect(outcome == 5)
            }
        }
    }
}
