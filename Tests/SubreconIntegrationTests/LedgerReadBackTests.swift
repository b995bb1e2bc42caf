import Foundation
import PostgresNIO
import SubreconCore
import SubreconDatabase
import SubreconPorts
import SubreconTestSupport
import Testing

@testable import SubreconJob

/// Every later phase reads the run's verdicts back from the ledger, page by page: what it reads must be what was
/// appended, and the refunds reader must give what the whole verdicts carry.
@Suite(
    "The run's ledger read back (real PostgreSQL)", .serialized,
    .enabled(if: TestDatabase.isEnabled, TestDatabase.skipMessage))
struct LedgerReadBackTests {
    static let asOf = Date(timeIntervalSince1970: 1_780_000_000)

    static func verdict(_ index: Int, action: Action = .downgrade, error: Verdict.Problem? = nil) -> Verdict {
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

    static func start(_ db: SubscriptionDatabase, _ runID: String) async throws {
        try await db.runs.startRun(RunRecord(id: runID, mode: .nightly, asOf: asOf, startedAt: asOf))
    }

    static func all(_ ledger: DatabaseLedger, limit: Int) async throws -> [LedgerEntry] {
        var entries: [LedgerEntry] = []
        while true {
            let page = try await ledger.page(after: entries.last?.seq ?? -1, limit: limit)
            guard !page.isEmpty else { return entries }
            entries += page
        }
    }

    @Test("pages read back every verdict as appended, in seq order, whatever order the batches came in")
    func pagesReadBackWhatWasAppended() async throws {
        try await TestDatabase.withDatabase { db, client in
            try await Self.start(db, "run-pages")
            let ledger = DatabaseLedger(database: db.verdicts, runID: "run-pages")
            let seqs: [Int64] = [0, 1, 2, 5, 4, 3]
            try await ledger.append(seqs.prefix(3).map { ($0, Self.verdict(Int($0))) }, progress: RunProgress())
            try await ledger.append(seqs.suffix(3).map { ($0, Self.verdict(Int($0))) }, progress: RunProgress())
            let read = try await Self.all(ledger, limit: 4)
            #expect(read.map(\.seq) == [0, 1, 2, 3, 4, 5])
            #expect(read.map(\.verdict) == (0..<6).map { Self.verdict($0) })
            #expect(read.allSatisfy { $0.outcome == nil && $0.queuedIntents.isEmpty })

            // Nothing is served from memory: a spoiled stored verdict fails the very process that appended it.
            try await client.query("update reconcile_verdicts set verdict = '{}'::jsonb where run_id = 'run-pages' and seq = 4")
            await #expect(throws: (any Error).self) { _ = try await Self.all(ledger, limit: 4) }
        }
    }

    @Test("a user already in the ledger keeps its first verdict")
    func firstVerdictWins() async throws {
        try await TestDatabase.withDatabase { db, _ in
            try await Self.start(db, "run-first")
            let ledger = DatabaseLedger(database: db.verdicts, runID: "run-first")
            let first = Self.verdict(1, action: .downgrade)
            try await ledger.append([(0, first)], progress: RunProgress())
            try await ledger.append([(0, Self.verdict(1, action: .none)), (7, Self.verdict(1, action: .skipped))], progress: RunProgress())
            let entries = try await Self.all(ledger, limit: 10)
            #expect(entries.map(\.seq) == [0])
            #expect(entries.first?.verdict == first)
        }
    }

    @Test("the refunds reader gives each verdict's refunds, and skips verdicts with none or an empty list")
    func refundsMatchTheVerdicts() async throws {
        try await TestDatabase.withDatabase { db, _ in
            try await Self.start(db, "run-refunds")
            let ledger = DatabaseLedger(database: db.verdicts, runID: "run-refunds")
            var entries = (0..<9).map { (seq: Int64($0), verdict: Self.verdict($0)) }
            for index in [0, 3, 4, 8] { entries[index].verdict.refunds = nil }
            for index in [1, 6] { entries[index].verdict.refunds = [] }
            entries[5].verdict.refunds?.append(
                SeenRefund(store: "stripe", transactionID: "ch_5", refundedAt: Self.asOf, amount: nil, currency: nil))
            try await ledger.append(entries, progress: RunProgress())

            var read: [LedgerRefunds] = []
            while true {
                let page = try await ledger.refunds(after: read.last?.seq ?? -1, limit: 2)
                guard !page.isEmpty else { break }
                read += page
            }
            let expected = try await Self.all(ledger, limit: 3).compactMap { entry in
                entry.verdict.refunds.flatMap {
                    $0.isEmpty ? nil : LedgerRefunds(seq: entry.seq, userID: entry.verdict.row.id, refunds: $0)
                }
            }
            #expect(read.map(\.seq) == [2, 5, 7])
            #expect(read == expected)
            #expect(read.first { $0.seq == 5 }?.refunds.count == 2)
        }
    }
}
