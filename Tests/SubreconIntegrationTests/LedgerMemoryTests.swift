import Foundation
import PostgresNIO
import SubreconCore
import SubreconDatabase
import SubreconTestSupport
import Testing

@testable import SubreconJob

/// The verdicts a run appended are taken from memory by its later phases; the ledger stays the record that a new
/// process (`--resume`, `subrecon report`) reads, and both give the same verdicts.
@Suite(
    "The run's ledger and its verdicts in memory (real PostgreSQL)", .serialized,
    .enabled(if: TestDatabase.isEnabled, TestDatabase.skipMessage))
struct LedgerMemoryTests {
    static let asOf = Date(timeIntervalSince1970: 1_780_000_000)

    static func verdict(_ index: Int, action: Action = .downgrade, error: String? = nil) -> Verdict {
        let row = UserRow(
            id: "u\(index)", currentTier: 2, status: "active", endDate: asOf.addingTimeInterval(-86_400.123_456),
            source: "app_store", productID: "com.example.monthly.premium", originalTransactionID: "20000\(index)", autoRenew: true,
            updatedAtMicros: 1_780_000_000_123_456 + Int64(index))
        let truth = Entitlement(
            tier: 0, status: .expired, endDate: asOf.addingTimeInterval(-3_600.5), graceEndsAt: nil, source: "app_store",
            productID: "com.example.monthly.premium", originalTransactionID: "20000\(index)", autoRenew: false)
        var verdict = Verdict(
            row: row, truth: truth, action: action, sources: [.revenueCat, .appStore], drift: [.missedExpiration],
            intents: [PushIntent(userID: row.id, kind: .expired, periodEnd: truth.endDate, productID: truth.productID, tier: 0)],
            store: .appStore, price: Money(amount: Decimal(string: "12.49")!, currency: "EUR"), error: error)
        verdict.financePrice = FinancePrice(amount: Decimal(string: "9.99"), currency: "usd", basis: .renewal)
        verdict.refunds = [
            SeenRefund(
                store: "app_store", transactionID: "r\(index)", refundedAt: asOf.addingTimeInterval(-0.25), amount: 1, currency: "EUR")
        ]
        verdict.candidateReasons = [.expired]
        return verdict
    }

    static func start(_ store: SubscriptionDatabase, _ runID: String) async throws {
        try await store.startRun(RunRecord(id: runID, mode: .nightly, asOf: asOf, startedAt: asOf))
    }

    static func all(_ ledger: DatabaseLedger, limit: Int) async throws -> [LedgerEntry] {
        var entries: [LedgerEntry] = []
        while true {
            let page = try await ledger.page(after: entries.last?.seq ?? -1, limit: limit)
            guard !page.isEmpty else { return entries }
            entries += page
        }
    }

    @Test("pages of the appending process come from memory, a new process reads the same verdicts from the ledger")
    func memoryMatchesLedger() async throws {
        try await TestDatabase.withDatabase { store, client in
            try await Self.start(store, "run-memory")
            let ledger = DatabaseLedger(database: store, runID: "run-memory")
            let seqs: [Int64] = [0, 1, 2, 5, 4, 3]
            try await ledger.append(seqs.map { ($0, Self.verdict(Int($0))) }, progress: RunProgress())
            #expect(ledger.memory.count == 6)
            let fromMemory = try await Self.all(ledger, limit: 4)
            let fromLedger = try await Self.all(DatabaseLedger(database: store, runID: "run-memory"), limit: 4)
            #expect(fromMemory.map(\.seq) == [0, 1, 2, 3, 4, 5])
            #expect(fromMemory == fromLedger)

            // Spoil the stored JSON: the appending process does not read it back, a new one must and fails.
            try await client.query("update reconcile_verdicts set verdict = '{}'::jsonb where run_id = 'run-memory'")
            #expect(try await Self.all(ledger, limit: 4) == fromMemory)
            await #expect(throws: (any Error).self) {
                _ = try await Self.all(DatabaseLedger(database: store, runID: "run-memory"), limit: 4)
            }
        }
    }

    @Test("a verdict the ledger did not take (the user keeps its first) is never served from memory")
    func firstVerdictWins() async throws {
        try await TestDatabase.withDatabase { store, _ in
            try await Self.start(store, "run-first")
            let ledger = DatabaseLedger(database: store, runID: "run-first")
            let first = Self.verdict(1, action: .downgrade)
            try await ledger.append([(0, first)], progress: RunProgress())
            try await ledger.append([(0, Self.verdict(1, action: .none)), (7, Self.verdict(1, action: .skipped))], progress: RunProgress())
            let entries = try await Self.all(ledger, limit: 10)
            #expect(entries.map(\.seq) == [0])
            #expect(entries.first?.verdict == first)
            #expect(ledger.memory.count == 1)
        }
    }

    @Test("a verdict with a NUL, and any beyond the memory's capacity, are read from the ledger as stored")
    func storedFormAndCapacity() async throws {
        try await TestDatabase.withDatabase { store, _ in
            try await Self.start(store, "run-bounded")
            let ledger = DatabaseLedger(database: store, runID: "run-bounded", memory: VerdictMemory(capacity: 3))
            var entries = (0..<6).map { (seq: Int64($0), verdict: Self.verdict($0)) }
            entries[1].verdict = Self.verdict(1, error: "revenuecat: HTTP 400: bad\u{0}thing")
            try await ledger.append(entries, progress: RunProgress())
            #expect(ledger.memory.count == 3)
            let read = try await Self.all(ledger, limit: 2)
            #expect(read == (try await Self.all(DatabaseLedger(database: store, runID: "run-bounded"), limit: 2)))
            #expect(read.count == 6)
            #expect(read[1].verdict.error == #"revenuecat: HTTP 400: bad\u0000thing"#)
        }
    }
}
