import Foundation
import SubreconCore
import SubreconDatabase

/// After validation, before the valve and the apply (CONTRACT "Whose purchase it is"): each row naming a line
/// RevenueCat listed tonight under another user (`LineTransfer`) gets the verdict `ownership_conflict`, untouched and
/// listed, in place of whatever its own sources said, so that no line entitles two users; a row of this shard that
/// was no candidate tonight is read and listed too. Its owner's verdict (the restore writing the identifier) stands.
struct TransferStep: Sendable {
    var ledger: any VerdictLedger
    var candidates: any CandidateSource
    var options: RunOptions

    /// Returns how many rows were listed as `ownership_conflict`.
    func run() async throws -> Int {
        let transfers = try await ledger.transfers()
        let owners = Set(transfers.map(\.owner))
        let holders = Set(transfers.flatMap(\.holders)).subtracting(owners).filter(options.shard.contains).sorted()
        guard !holders.isEmpty else { return 0 }
        let query = CandidateQuery(mode: .backfill, asOf: options.asOf, userIDs: holders, shard: options.shard)
        var rows: [UserRow] = []
        var after: String?
        while true {
            let page = try await candidates.candidatePage(query, after: after, limit: max(1, options.tuning.pageSize))
            rows += page
            guard let last = page.last, page.count >= max(1, options.tuning.pageSize) else { break }
            after = last.id
        }
        // A row that cannot be read keeps its own verdict (`row_error`): nothing about it can be listed as read.
        let readable = rows.filter { $0.rowError == nil }
        try await ledger.replace(readable.map { Verdict.transferred($0, by: transfers) })
        return readable.count
    }
}
