import Foundation
import SubreconCore
import SubreconPorts

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
        // Every row naming the line, whatever its tier: a row holding no tier (the lost first webhook the free sweep
        // exists for) is a holder as much as a paying one, and its own verdict must not stand beside the owner's.
        let rows = try await candidates.rows(named: holders, shard: options.shard)
        // A row that cannot be read keeps its own verdict (`row_error`): nothing about it can be listed as read.
        let readable = rows.filter { $0.rowError == nil }
        try await ledger.replace(readable.map { Verdict.transferred($0, by: transfers) })
        return readable.count
    }
}
