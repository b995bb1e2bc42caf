import Foundation
import PostgresNIO
import SubreconApp
import SubreconCore
import SubreconDatabase
import SubreconPorts
import SubreconTestKit
import SubreconTestSupport
import Testing

/// Who holds an Apple original transaction, asked for many users in one read (`CoalescedReceiptLookup`): each caller
/// gets what the database answers it alone (docs/CONTRACT.md, "Whose purchase it is"), a failed read fails every
/// lookup it carried, and a cancelled caller leaves without waiting.
@Suite("Holder lookups coalesced into one read")
struct CoalescedReceiptLookupTests {
    /// A lookup whose reads wait until the test releases them, answering from a fixed table of holders.
    actor GatedLookup: ReceiptLookup {
        let table: [String: [String]]
        var failure: (any Error)?
        private(set) var reads: [[String]] = []
        private var gate: CheckedContinuation<Void, Never>?
        private var open = false

        init(table: [String: [String]], failure: (any Error)? = nil) {
            self.table = table
            self.failure = failure
        }

        nonisolated func receipt(for userID: String) async throws -> String? { nil }

        nonisolated func otherUsers(holdingOriginalTransactionID originalTransactionID: String, besides userID: String) async throws
            -> [String]
        {
            Array((table[originalTransactionID] ?? []).filter { $0 != userID }.prefix(5))
        }

        func originalTransactionHolders(_ originalTransactionIDs: [String], limit: Int) async throws -> [String: [String]] {
            reads.append(originalTransactionIDs)
            if !open { await withCheckedContinuation { gate = $0 } }
            if let failure { throw failure }
            var held: [String: [String]] = [:]
            for id in Set(originalTransactionIDs) where table[id] != nil { held[id] = Array(table[id]!.prefix(limit)) }
            return held
        }

        /// Lets the waiting read and every later one through.
        func release() {
            open = true
            gate?.resume()
            gate = nil
        }

        var waitingRead: Bool { gate != nil }
    }

    struct ReadFailed: Error {}

    /// What one lookup answered: the users, or the name of the error's type.
    enum Answer: Sendable, Equatable {
        case users([String])
        case failed(String)

        init(_ body: () async throws -> [String]) async {
            do { self = .users(try await body()) } catch { self = .failed("\(type(of: error))") }
        }
    }

    static let table: [String: [String]] = [
        "t1": ["a"], "t2": ["a", "b", "c", "d", "e", "f", "g"], "t3": ["b", "c"],
    ]

    /// Starts `lookups` at once while the first read is held, then releases it: the first carries one lookup, the
    /// next carries every other.
    static func overlapping(_ base: GatedLookup, _ lookups: [(id: String, besides: String)]) async throws -> (
        answers: [Int: Answer], coalesced: CoalescedReceiptLookup
    ) {
        let coalesced = CoalescedReceiptLookup(base)
        let answers = try await withThrowingTaskGroup(of: (Int, Answer).self) { group in
            group.addTask {
                (
                    0,
                    await Answer {
                        try await coalesced.otherUsers(holdingOriginalTransactionID: lookups[0].id, besides: lookups[0].besides)
                    }
                )
            }
            #expect(try await TestPoll.until(seconds: 30) { await base.waitingRead })
            for (index, lookup) in lookups.enumerated().dropFirst() {
                group.addTask {
                    (
                        index,
                        await Answer { try await coalesced.otherUsers(holdingOriginalTransactionID: lookup.id, besides: lookup.besides) }
                    )
                }
            }
            #expect(try await TestPoll.until(seconds: 30) { await coalesced.waitingLookups == lookups.count - 1 })
            await base.release()
            var answers: [Int: Answer] = [:]
            for try await (index, answer) in group { answers[index] = answer }
            return answers
        }
        return (answers, coalesced)
    }

    @Test("overlapping lookups share one read, and each gets the others holding its id, its own row left out")
    func overlappingShareARead() async throws {
        let base = GatedLookup(table: Self.table)
        let lookups = [("t1", "z"), ("t1", "a"), ("t2", "a"), ("t2", "z"), ("t3", "b"), ("t9", "a"), ("t2", "f"), ("t3", "x")]
        let (answers, coalesced) = try await Self.overlapping(base, lookups.map { (id: $0.0, besides: $0.1) })
        #expect(answers[0] == .users(["a"]))
        #expect(answers[1] == .users([]))
        #expect(answers[2] == .users(["b", "c", "d", "e", "f"]))
        #expect(answers[3] == .users(["a", "b", "c", "d", "e"]))
        #expect(answers[4] == .users(["c"]))
        #expect(answers[5] == .users([]))
        #expect(answers[6] == .users(["a", "b", "c", "d", "e"]))
        #expect(answers[7] == .users(["b", "c"]))
        #expect(await base.reads.count == 2)
        #expect(await coalesced.reads == 2)
        #expect(await base.reads.last?.count == lookups.count - 1)
        for (index, lookup) in lookups.enumerated() {
            let alone = try await base.otherUsers(holdingOriginalTransactionID: lookup.0, besides: lookup.1)
            #expect(answers[index] == .users(alone), "\(lookup)")
        }
    }

    @Test("a read that fails fails every lookup it carried; a blank id is held by no one and is never read")
    func failedReadFailsItsLookups() async throws {
        let base = GatedLookup(table: Self.table, failure: ReadFailed())
        let (answers, _) = try await Self.overlapping(base, [("t1", "z"), ("t2", "a"), ("t3", "z")].map { (id: $0.0, besides: $0.1) })
        #expect((0..<3).map { answers[$0] } == Array(repeating: .failed("ReadFailed"), count: 3))
        let coalesced = CoalescedReceiptLookup(base)
        #expect(try await coalesced.otherUsers(holdingOriginalTransactionID: " \t", besides: "a") == [])
        #expect(await coalesced.reads == 0)
    }

    @Test("a caller cancelled while its lookup waits for a batch leaves at once; the others are answered")
    func cancelledCallerLeaves() async throws {
        let base = GatedLookup(table: Self.table)
        let coalesced = CoalescedReceiptLookup(base)
        let first = Task { try await coalesced.otherUsers(holdingOriginalTransactionID: "t1", besides: "z") }
        #expect(try await TestPoll.until(seconds: 30) { await base.waitingRead })
        let cancelled = Task { try await coalesced.otherUsers(holdingOriginalTransactionID: "t2", besides: "z") }
        let kept = Task { try await coalesced.otherUsers(holdingOriginalTransactionID: "t3", besides: "z") }
        #expect(try await TestPoll.until(seconds: 30) { await coalesced.waitingLookups == 2 })
        cancelled.cancel()
        await #expect(throws: CancellationError.self) { try await cancelled.value }
        #expect(await coalesced.waitingLookups == 1)
        await base.release()
        #expect(try await first.value == ["a"])
        #expect(try await kept.value == ["b", "c"])
        #expect(await base.reads.map(\.count) == [1, 1])
    }

    /// The rule itself, as one query of its own: the other rows holding `id`, the first five in id order; none for a
    /// blank id.
    static func otherUsersAlone(_ client: PostgresClient, _ id: String, besides userID: String) async throws -> [String] {
        guard !id.allSatisfy(\.isWhitespace) else { return [] }
        var binds = PostgresBindings()
        binds.append(id)
        binds.append(userID)
        let rows = try await client.query(
            PostgresQuery(
                unsafeSQL: "select id from users where iap_original_transaction_id = $1 and id <> $2 order by id limit 5",
                binds: binds))
        var ids: [String] = []
        for try await user in rows.decode(String.self) { ids.append(user) }
        return ids
    }

    @Test(
        "against PostgreSQL: many lookups at once answer exactly what each asked alone answers (seeded)",
        .enabled(if: TestDatabase.isEnabled, TestDatabase.skipMessage))
    func databaseAnswersAsAlone() async throws {
        try await TestDatabase.withDatabase { database, client in
            var random = SeededRandom(seed: 0xC0A1_E5CE)
            let ids = (0..<12).map { "10000\($0)" } + ["", " ", " 100001 "]
            for user in 0..<60 {
                var binds = PostgresBindings()
                binds.append("u\(String(format: "%02d", user))")
                if random.chance(0.9) { binds.append(random.pick(ids)) } else { binds.appendNull() }
                try await client.query(
                    PostgresQuery(
                        unsafeSQL: """
                            insert into users (id, current_tier, subscription_status, iap_original_transaction_id) \
                            values ($1, 1, 'active', $2)
                            """, binds: binds))
            }
            let lookups = (0..<200).map { _ in (id: random.pick(ids + ["999"]), besides: "u\(String(format: "%02d", random.int(0...70)))") }
            let coalesced = CoalescedReceiptLookup(database.receipts)
            let answers = try await withThrowingTaskGroup(of: (Int, [String]).self) { group in
                for (index, lookup) in lookups.enumerated() {
                    group.addTask {
                        (index, try await coalesced.otherUsers(holdingOriginalTransactionID: lookup.id, besides: lookup.besides))
                    }
                }
                var answers: [Int: [String]] = [:]
                for try await (index, answer) in group { answers[index] = answer }
                return answers
            }
            var named = 0
            for (index, lookup) in lookups.enumerated() {
                let alone = try await Self.otherUsersAlone(client, lookup.id, besides: lookup.besides)
                #expect(answers[index] == alone, "lookup \(index): \(lookup)")
                #expect(try await database.receipts.otherUsers(holdingOriginalTransactionID: lookup.id, besides: lookup.besides) == alone)
                named += alone.count
            }
            #expect(named > 200, "the seeded table names holders (\(named))")
            #expect(await coalesced.reads <= lookups.count)
            let held = try await database.receipts.originalTransactionHolders(ids + ["999"], limit: 3)
            #expect(held[""] == nil && held[" "] == nil && held["999"] == nil)
            #expect(held.values.allSatisfy { $0.count <= 3 && $0 == $0.sorted() })
        }
    }
}
