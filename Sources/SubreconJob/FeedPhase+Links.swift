import Foundation
import Logging
import SubreconCore
import SubreconPorts
import SubreconReports

/// What the feeds and inventories of a run named, beyond the candidates they recorded: a dry run's candidates (kept in
/// memory: it writes nothing), tonight's links and refunds by user (a resumed run reads those its first attempt
/// recorded back from the database), and the night's orphans.
struct FeedHarvest: Sendable {
    var named: [String: [CandidateReason]] = [:]
    var links: [String: [FactOrigin: String]] = [:]
    /// The refunds the feeds stated, by the user whose row holds the entry's identifier (`UserRow.feedRefunds`).
    var refunds: [String: [FeedRefundFact]] = [:]
    /// The refunds the feeds stated for identifiers no row holds, as read (`unclaimedStated`), then indexed once for
    /// every row of the run (`UserRow.unclaimedFeedRefunds`); none in a resumed run, which reads no feed again.
    var unclaimedStated: [FeedRefundFact] = []
    var unclaimed = UnclaimedFeedRefunds.empty
    var orphans: [Orphan] = []

    /// `row` with what tonight's feeds gave its user: the identifiers linked to it (CONTRACT "Whose purchase it is"), asked
    /// with and written with the change, the refunds stated for the identifiers it holds (CONTRACT "Finance figures"), and
    /// the night's index of those no row holds, shared, not copied (CONTRACT "Sources and the decision").
    func carried(by row: UserRow) -> UserRow {
        var row = row
        row.links = links[row.id] ?? [:]
        row.feedRefunds = refunds[row.id] ?? []
        row.unclaimedFeedRefunds = unclaimed
        return row
    }

    mutating func name(_ user: String, _ reason: CandidateReason) {
        if !(named[user]?.contains(reason) ?? false) { named[user, default: []].append(reason) }
    }
}

extension FeedPhase {
    /// Links the purchases no row holds to the users their stores named (recorded as candidates of the run, or kept
    /// in `harvest` by a dry run), and keeps the orphans among them in `harvest` (CONTRACT "Whose purchase it is").
    func link(_ purchases: [UnlinkedPurchase], column: FeedColumn, line: inout RunSummary.Feed, into harvest: inout FeedHarvest)
        async throws
    {
        guard let links, !purchases.isEmpty else { return }
        let outcome = try await LinkStep(links: links, options: options).resolve(purchases, column: column)
        line.linked = outcome.links.count
        line.orphans = outcome.orphans.count
        harvest.orphans.append(contentsOf: outcome.orphans)
        if options.dryRun {
            for link in outcome.links {
                harvest.name(link.userID, .linkedPurchase)
                harvest.links[link.userID, default: [:]][link.origin] = link.identifier
            }
        } else if !outcome.links.isEmpty {
            try await links.addLinks(runID: runID, outcome.links)
        }
    }

    /// Reads every store inventory (CONTRACT "Which users a run asks about": Stripe's live subscriptions) under the feeds' deadline: the rows
    /// holding a listed identifier and no tier become candidates, the identifiers no row holds are linked or
    /// listed. An inventory that fails is reported like a failed feed (exit 1 at most); it has no window.
    func readInventories(into harvest: inout FeedHarvest, report: inout [String: RunSummary.Feed]) async throws {
        for origin in source.inventoryOrigins {
            guard let read = await deadlineBounded(origin, { [source] in await source.inventory(origin) }) else { continue }
            let at = options.asOf
            report[read.reason.rawValue] = try await take(read, since: at, until: at, freeOnly: true, into: &harvest)
        }
    }

    /// Keeps the night's orphans across nights (first and last night seen), once per store and identifier; a dry run
    /// keeps none and reports tonight's as they are.
    func keepOrphans(_ harvest: inout FeedHarvest) async throws {
        var seen = Set<String>()
        let distinct = harvest.orphans.filter { seen.insert("\($0.origin.rawValue)\u{0}\($0.identifier)").inserted }
        guard !distinct.isEmpty else { return }
        guard !options.dryRun, let links else {
            harvest.orphans = distinct
            return
        }
        harvest.orphans = try await links.recordOrphans(runID: runID, night: options.asOf, distinct)
        logger.warning(
            "paying purchases no row names and whose store names no known account: listed in orphans.csv",
            metadata: ["orphans": "\(harvest.orphans.count)"])
    }
}
