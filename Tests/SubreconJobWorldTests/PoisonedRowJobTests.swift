import Foundation
import StoreSimulator
import SubreconCore
import SubreconJob
import SubreconReports
import SubreconTestSupport
import SubreconTestWorld
import Testing

/// One bad row is one user's error (CONTRACT "Hostile answers and bounded work"): a row the job cannot read is that
/// user's `row_error`, untouched and never asked about, while the night reconciles the rest (exit 1). In memory the
/// row carries its read error; in PostgreSQL its `updated_at` is `-infinity` (the values PostgreSQL alone can hold are
/// `PoisonedRowTests`').
@Suite("Poisoned rows in every backend", .serialized)
struct PoisonedRowJobTests {
    @Test("an unreadable row is row_error and untouched, no source asked; the others are reconciled; exit 1", arguments: JobWorld.backends)
    func oneBadRow(_ backend: WorldBackend) async throws {
        try await JobWorld.with(backend) { h in
            for id in ["p-bad", "p-lapsed"] {
                try await h.seed(h.row(id, tier: 1, "active", end: -2), JobWorld.subscription(expires: -2))
            }
            try await h.seed(h.row("p-renewed", tier: 1, "active", end: -2), JobWorld.subscription(purchased: -2, expires: 28))
            try await h.db.poison("p-bad")
            let result = try await h.run { $0.maxDowngradeRatio = 1 }
            #expect(result.exitStatus == .userErrors)
            let rows = try h.report(result)
            #expect(rows["p-bad"]?.drift == ["row_error"] && rows["p-bad"]?.action == "skipped", "\(String(describing: rows["p-bad"]))")
            #expect(await h.revenueCat.counters().requestsPerUser["p-bad"] == nil, "no source asked about an unreadable row")
            #expect(try await h.auditRows("p-bad") == 0)
            #expect(try await h.intents("p-bad") == 0)
            #expect(rows["p-lapsed"]?.action == "downgrade" && rows["p-lapsed"]?.applied == true)
            #expect(rows["p-renewed"]?.action == "extend" && rows["p-renewed"]?.applied == true)
            #expect(result.summary.errors == 1 && result.summary.drift["row_error"] == 1)
        }
    }
}
