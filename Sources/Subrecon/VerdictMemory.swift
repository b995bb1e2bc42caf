import SubreconCore
import Synchronization

/// The verdicts this process appended to a run's ledger, by `seq`, so that the apply, report and refund-review phases
/// of the same run take them from memory instead of decoding their JSON back from `reconcile_verdicts`.
///
/// The ledger in PostgreSQL stays the record: it is written first, and only the verdicts it actually took (a user
/// already in the ledger keeps its first verdict) are kept here; outcomes and queued intents are always read from it;
/// a resumed run, `subrecon report` or any verdict beyond `capacity` is read from it. A verdict whose stored form
/// differs from the value (a NUL made visible for `jsonb`) is not kept, so both paths read back the same verdict.
final class VerdictMemory: Sendable {
    /// About 1 kB a verdict: 20,000 verdicts are ~20 MB at most. Past it, the ledger is read back as before.
    static let defaultCapacity = 20_000

    private struct State {
        var verdicts: [Int64: Verdict] = [:]
        /// `verdicts`' keys in order; rebuilt when nil.
        var sorted: [Int64]?
    }

    let capacity: Int
    private let state = Mutex(State())

    init(capacity: Int = VerdictMemory.defaultCapacity) { self.capacity = max(0, capacity) }

    var count: Int { state.withLock { $0.verdicts.count } }

    /// Keeps `entries` the ledger took (`inserted`), while there is room.
    func keep(_ entries: [(seq: Int64, verdict: Verdict)], inserted: Set<Int64>) {
        state.withLock { state in
            for (seq, verdict) in entries where inserted.contains(seq) && state.verdicts.count < capacity {
                guard state.verdicts.updateValue(verdict, forKey: seq) == nil else { continue }
                state.sorted = nil
            }
        }
    }

    /// The kept verdicts among the first `limit` kept seqs after `seq`: every kept verdict a ledger page of `limit`
    /// entries after `seq` can hold (the kept seqs are a subset of the ledger's).
    func verdicts(after seq: Int64, limit: Int) -> [Int64: Verdict] {
        state.withLock { state in
            guard !state.verdicts.isEmpty else { return [:] }
            let sorted = state.sorted ?? state.verdicts.keys.sorted()
            state.sorted = sorted
            var low = 0
            var high = sorted.count
            while low < high {
                let middle = (low + high) / 2
                if sorted[middle] <= seq { low = middle + 1 } else { high = middle }
            }
            var page: [Int64: Verdict] = [:]
            for next in sorted[low..<min(sorted.count, low + limit)] { page[next] = state.verdicts[next] }
            return page
        }
    }
}
