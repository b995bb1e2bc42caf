import Foundation
import SubreconCore
import SubreconPorts
import SubreconReports

/// Which runs of a period count and which nights are gaps (docs/CONTRACT.md, "subrecon finance"). Pure: the period's
/// runs in, the plan out.
///
/// - A run counts when it completed (also after `--resume`, which completes the same run) and is not a dry run; every
///   mode counts (a backfill's changes are flows too). Its applied changes are the flows.
/// - A night is a UTC day meeting the period; a nightly run belongs to the night of its as-of. The shard layouts
///   expected on a night are those its nightly runs used, else the nearest earlier night's, else the nearest later
///   night's, else one shard (`0/1`). A shard of an expected layout with no counting nightly run that night is a gap:
///   `failed`, `unfinished` (running, valve tripped), `dry_run_only`, `not_yet` (the night has not ended) or `missing`.
/// - The stocks are read, for each shard of the layout of the last counting nightly run, from that shard's last
///   counting nightly run in the period.
public struct FinanceNightPlan: Sendable {
    public struct NightRun: Sendable, Hashable {
        public var night: String
        public var shard: String
        public var run: FinanceRun
    }

    public var nights: [String]
    public var counted: [FinanceRun] = []
    public var notCounted: [FinanceRunNote] = []
    public var gaps: [FinanceGap] = []
    /// Per night and shard, the last counting nightly run (the series' revenue at risk).
    public var nightRuns: [NightRun] = []
    /// Per shard of the latest layout, its last counting nightly run (the stocks).
    public var stockRuns: [NightRun] = []

    public init(runs: [FinanceRun], range: FinancePeriodRange, now: Date) {
        let days = range.nights
        nights = days.map { FinanceTally.night(of: $0) }
        counted = runs.filter(\.counts)
        notCounted = runs.filter { !$0.counts }.map { FinanceRunNote(runID: $0.id, reason: $0.dryRun ? "dry_run" : $0.status.rawValue) }
        let nightly = Dictionary(grouping: runs.filter { $0.mode == .nightly }) { FinanceTally.night(of: $0.asOf) }
        let layouts = Self.layouts(nights: nights, nightly: nightly)
        for (day, night) in zip(days, nights) {
            let here = nightly[night] ?? []
            for count in layouts[night] ?? [1] {
                for index in 0..<count {
                    let shard = ShardSpec(index: index, count: count)
                    let mine = here.filter { $0.shard == shard }
                    if let last = mine.last(where: \.counts) {
                        nightRuns.append(NightRun(night: night, shard: shard.description, run: last))
                    } else {
                        let ended = day.addingTimeInterval(86_400) <= now
                        gaps.append(
                            FinanceGap(
                                night: night, shard: shard.description, kind: Self.gapKind(mine, ended: ended), runIDs: mine.map(\.id)))
                    }
                }
            }
        }
        if let latest = counted.last(where: { $0.mode == .nightly }) {
            for index in 0..<latest.shard.count {
                let shard = ShardSpec(index: index, count: latest.shard.count).description
                if let last = nightRuns.last(where: { $0.shard == shard }) { stockRuns.append(last) }
            }
        }
    }

    /// Why a shard's night did not count, from its runs (none counting).
    static func gapKind(_ runs: [FinanceRun], ended: Bool) -> String {
        let applying = runs.filter { !$0.dryRun }
        if applying.contains(where: { $0.status == .failed }) { return "failed" }
        if !applying.isEmpty { return "unfinished" }
        if !runs.isEmpty { return "dry_run_only" }
        return ended ? "missing" : "not_yet"
    }

    /// The shard counts expected on each night (see the type's comment).
    static func layouts(nights: [String], nightly: [String: [FinanceRun]]) -> [String: [Int]] {
        let seen = nights.map { night in Set((nightly[night] ?? []).map(\.shard.count)).sorted() }
        var out: [String: [Int]] = [:]
        for (i, night) in nights.enumerated() {
            if !seen[i].isEmpty {
                out[night] = seen[i]
            } else if let earlier = seen[..<i].last(where: { !$0.isEmpty }) {
                out[night] = earlier
            } else {
                out[night] = seen[i...].first(where: { !$0.isEmpty }) ?? [1]
            }
        }
        return out
    }
}
