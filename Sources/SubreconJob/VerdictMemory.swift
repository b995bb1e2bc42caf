import SubreconCore
import Synchronization

/// The verdicts this process appended to a run's ledger, by `seq`, so that the apply, report and refund-review phases
/// of the same run take them from memory instead of decoding their JSON back from `reconcile_verdicts`.
///
/// The ledger in PostgreSQL stays the record: it is written first, and only the verdicts it actually took (a user
/// already in the ledger keeps its first verdict) are kept here; outcomes and queued intents are always read from it;
/// a resumed run, `subrecon report` or any verdict beyond `capacity` is read from it. A verdict whose stored form
/// differs from the value (a NUL made visible for `jsonb`) is not kept, so both paths read back the same verdict.
package final class VerdictMemory: Sendable {
    /// A kept verdict costs about 0.7 kB (the struct inline in one array reserved up front, so no growth slack, and
    /// its strings and arrays): 20,000 are ~14 MB at most. Past it, the ledger is read back as before.
    package static let defaultCapacity = 20_000

    let capacity: Int
    /// Kept verdicts in seq order (they arrive nearly in order: the scan's reorder window).
    private let state = Mutex<[(seq: Int64, verdict: Verdict)]>([])

    package init(capacity: Int = VerdictMemory.defaultCapacity) { self.capacity = max(0, capacity) }

    var count: Int { state.withLock { $0.count } }

    /// Keeps `entries` the ledger took (`inserted`: new seqs), while there is room.
    func keep(_ entries: [(seq: Int64, verdict: Verdict)], inserted: Set<Int64>) {
        state.withLock { kept in
            for entry in entries where inserted.contains(entry.seq) && kept.count < capacity {
                if kept.isEmpty { kept.reserveCapacity(capacity) }
                var position = kept.endIndex
                while position > kept.startIndex, kept[position - 1].seq > entry.seq { position -= 1 }
                guard position == kept.startIndex || kept[position - 1].seq != entry.seq else { continue }
                kept.insert(entry, at: position)
            }
        }
    }

    /// Drops the kept verdicts of `users` (their ledger entries were replaced).
    func forget(_ users: Set<String>) {
        guard !users.isEmpty else { return }
        state.withLock { kept in kept.removeAll { users.contains($0.verdict.row.id) } }
    }

    /// The kept verdicts among the first `limit` kept seqs after `seq`: every kept verdict a ledger page of `limit`
    /// entries after `seq` can hold (the kept seqs are a subset of the ledger's).
    func verdicts(after seq: Int64, limit: Int) -> [Int64: Verdict] {
        state.withLock { kept in
            var low = 0
            var high = kept.count
            while low < high {
                let middle = (low + high) / 2
                if kept[middle].seq <= seq { low = middle + 1 } else { high = middle }
            }
            var page: [Int64: Verdict] = [:]
            for entry in kept[low..<min(kept.count, low + limit)] { page[entry.seq] = entry.verdict }
            return page
        }
    }
}
