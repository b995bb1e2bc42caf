import SubreconCore
import SubreconPorts

/// A `ReceiptLookup` that asks who holds an Apple original transaction for many users in one read: the lookups that
/// arrive while one read is in flight wait and go together in the next, so a night of concurrent users costs one
/// statement per batch instead of one transaction per user, without making the first lookup wait for company.
///
/// Each caller gets exactly what a `ReceiptLookup`'s `otherUsers` answers alone: the other rows holding the id, at
/// most `OriginalTransactionHolders.named` in id order, none for an empty or whitespace-only id (docs/CONTRACT.md, "Whose purchase it is").
/// A read that fails fails every lookup it carried: each is then that user's error, as a failed lookup of its own
/// would be. A caller cancelled while waiting for a batch leaves at once; one whose id is already being read waits
/// for that statement, which the session's `statement_timeout` bounds.
public actor CoalescedReceiptLookup: ReceiptLookup {
    /// The most lookups one read carries.
    static let batchLimit = 500

    private struct Waiter {
        let ticket: Int
        let id: String
        let besides: String
        let continuation: CheckedContinuation<[String], any Error>
    }

    private let base: any ReceiptLookup
    private var waiting: [Waiter] = []
    private var reading = false
    private var nextTicket = 0
    /// How many reads were made (tests: fewer than the lookups when they overlap).
    package private(set) var reads = 0
    /// How many lookups wait for the next read (tests).
    package var waitingLookups: Int { waiting.count }

    public init(_ base: any ReceiptLookup) {
        self.base = base
    }

    public nonisolated func receipt(for userID: String) async throws -> String? {
        try await base.receipt(for: userID)
    }

    public nonisolated func originalTransactionHolders(_ originalTransactionIDs: [String], limit: Int) async throws -> [String: [String]] {
        try await base.originalTransactionHolders(originalTransactionIDs, limit: limit)
    }

    public func otherUsers(holdingOriginalTransactionID originalTransactionID: String, besides userID: String) async throws -> [String] {
        guard UserRow.storedIdentifier(originalTransactionID) != nil else { return [] }
        let ticket = nextTicket
        nextTicket += 1
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                guard !Task.isCancelled else {
                    continuation.resume(throwing: CancellationError())
                    return
                }
                waiting.append(Waiter(ticket: ticket, id: originalTransactionID, besides: userID, continuation: continuation))
                if !reading {
                    reading = true
                    Task { await self.readWaiting() }
                }
            }
        } onCancel: {
            Task { await self.withdraw(ticket) }
        }
    }

    /// A cancelled caller still waiting for a batch is answered `CancellationError` now.
    private func withdraw(_ ticket: Int) {
        guard let index = waiting.firstIndex(where: { $0.ticket == ticket }) else { return }
        waiting.remove(at: index).continuation.resume(throwing: CancellationError())
    }

    /// Reads for everyone waiting, a batch at a time, until nobody waits.
    private func readWaiting() async {
        while !waiting.isEmpty {
            let batch = Array(waiting.prefix(Self.batchLimit))
            waiting.removeFirst(batch.count)
            reads += 1
            do {
                let held = try await base.originalTransactionHolders(batch.map(\.id), limit: OriginalTransactionHolders.read)
                for waiter in batch {
                    waiter.continuation.resume(returning: OriginalTransactionHolders.others(held[waiter.id], besides: waiter.besides))
                }
            } catch {
                for waiter in batch { waiter.continuation.resume(throwing: error) }
            }
        }
        reading = false
    }
}
