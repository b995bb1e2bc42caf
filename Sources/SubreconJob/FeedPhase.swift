import Foundation
import Logging
import SourceHTTP
import SubreconCore
import SubreconPorts
import SubreconReports

/// Reads the store feeds of a nightly run (CONTRACT "Which users a run asks about") and records the users they name as candidates of the run
/// (`reconcile_run_candidates`), which the keyset scan unions with the CONTRACT "Which users a run asks about" rules and the sweep: one stream,
/// each user asked once. A feed that fails or ends incomplete is reported in the summary, its window stays
/// uncovered (the next nightly run reads it again), and the run goes on (exit 1 at most).
/// The refunds a feed's entries state are kept in `refunds_seen` like those a lookup states (CONTRACT "Finance figures"): for every
/// user of this shard whose row holds the entry's identifier, never a sandbox refund in a production run, never in
/// a dry run, never from a failing feed.
struct FeedPhase: Sendable {
    var feeds: any FeedCandidates
    /// Where the feeds' refunds are kept (`refunds_seen`, CONTRACT "Finance figures"); nil: not kept.
    var refunds: (any RefundRecords)?
    /// Where links and orphans are kept (CONTRACT "Whose purchase it is"); nil: unlinked purchases are only counted.
    var links: (any PurchaseLinks)? = nil
    var source: any FactSource
    var options: RunOptions
    var runID: String
    var logger: Logger
    /// The wall clock a feed's window ends at when as-of is ahead of it (`FeedWindowRule.window`).
    var now: @Sendable () -> Date = { Date() }

    /// The window `[since, until)` of one feed, read now: from `--feeds-since` for every feed, else the earliest
    /// instant this shard has not covered for that feed, at most 30 days before as-of, up to as-of or the clock now,
    /// whichever is earlier (`FeedWindowRule`; docs/CONTRACT.md, Which users a run asks about).
    func window(for origin: FactOrigin) async throws -> FeedWindow {
        var attempts: [FeedAttempt]?
        var last: Date?
        if options.feedsSince == nil {
            attempts = try await feeds.feedAttempts(
                feed: origin.rawValue, shard: options.shard, asOf: options.asOf, days: FeedWindowRule.maxDays)
            last = attempts == nil ? try await feeds.lastCompletedNightlyStart(shard: options.shard) : nil
        }
        return FeedWindowRule.window(
            asOf: options.asOf, readAt: now(), feedsSince: options.feedsSince, attempts: attempts, lastCompletedNightlyStart: last)
    }

    /// Reads every feed over its own window and records its candidates (a dry run keeps them in `named` instead:
    /// it writes nothing, not even the window); returns the summary's feed lines. A non-dry run records each
    /// window before reading it and marks it complete only once the feed was read to its end and its users and
    /// refunds recorded: a failed, incomplete or interrupted read leaves the window uncovered (CONTRACT "Hostile answers and bounded work").
    func run(into harvest: inout FeedHarvest) async throws -> [String: RunSummary.Feed] {
        var report: [String: RunSummary.Feed] = [:]
        for origin in source.feedOrigins {
            let window = try await self.window(for: origin)
            let (since, until) = (window.since, window.until)
            if !options.dryRun {
                try await feeds.beginFeedWindow(runID: runID, feed: origin.rawValue, shard: options.shard, since: since, until: until)
            }
            let line: RunSummary.Feed
            if window.isEmpty {
                // Nothing left to read: the store is not asked (it refuses an empty window), and that is no failure.
                line = RunSummary.Feed(since: ISO8601.string(since), until: ISO8601.string(until))
                logger.info(
                    "store feed has nothing to read", metadata: ["feed.source": "\(origin.rawValue)", "feed.since": "\(line.since)"])
            } else {
                guard let read = await deadlineBounded(origin, { [source] in await source.feed(origin, since: since, until: until) })
                else { continue }
                line = try await take(read, since: since, until: until, into: &harvest)
            }
            if line.complete && !options.dryRun { try await feeds.completeFeedWindow(runID: runID, feed: origin.rawValue) }
            report[origin.rawValue] = line
        }
        try await readInventories(into: &harvest, report: &report)
        try await keepOrphans(&harvest)
        // One index for the whole run, shared by every row (its size is the feeds').
        harvest.unclaimed = UnclaimedFeedRefunds(harvest.unclaimedStated)
        harvest.unclaimedStated = []
        return report
    }

    /// One feed (or inventory) read under the feeds' own deadline (`--feed-timeout`): a read cut off by it is a
    /// failed read (a feed's window stays uncovered), and the run goes on.
    func deadlineBounded(_ origin: FactOrigin, _ reading: @escaping @Sendable () async -> FeedRead?) async -> FeedRead? {
        let attempt = await LookupDeadline.run(within: options.feedDeadline) { await reading() }
        guard case .some(.some(var read)) = attempt.value else { return nil }
        if attempt.cutOff {
            let seconds = Double(options.feedDeadline.components.seconds)
            read.result = .failure(
                SourceError(origin: origin, kind: .fetch, message: "the feed was cut off by its deadline (--feed-timeout \(seconds) s)"))
        }
        return read
    }

    /// One feed's read: its candidates and refunds recorded (or kept in `named` by a dry run); its summary line.
    func take(
        _ read: FeedRead, since: Date, until: Date, freeOnly: Bool = false, into harvest: inout FeedHarvest
    ) async throws -> RunSummary.Feed {
        var line = RunSummary.Feed(since: ISO8601.string(since), until: ISO8601.string(until))
        let entries: FeedEntries
        switch read.result {
        case .failure(let error):
            line.error = error.message
            line.complete = false
            logger.warning(
                "store feed failed or incomplete; its window stays uncovered and the run goes on without it",
                metadata: ["feed.source": "\(read.source.rawValue)", "error": "\(error.message)"])
            return line
        case .success(let found): entries = found
        }
        line.entries = entries.entries
        line.rejected = entries.rejected
        let match: FeedMatch
        if options.dryRun {
            let found = try await feeds.feedUsers(column: read.column, identifiers: entries.identifiers, freeOnly: freeOnly)
            for user in found.users { harvest.name(user, read.reason) }
            match = FeedMatch(users: Set(found.users).count, unmatched: found.unmatched)
        } else {
            match = try await feeds.addFeedCandidates(
                runID: runID, column: read.column, identifiers: entries.identifiers, reason: read.reason, freeOnly: freeOnly)
        }
        line.matchedUsers = match.users
        line.unmatched = match.unmatched
        try await link(entries.purchases, column: read.column, line: &line, into: &harvest)
        // The same refund stated twice (REFUND then REVOKE, two events of one charge) is one refund.
        var seen = Set<FeedRefund>()
        let stated = entries.refunds.filter { seen.insert($0).inserted }
        line.refunds = stated.count
        let (owned, unclaimed) = try await owners(of: stated, column: read.column)
        for (user, stated) in owned {
            harvest.refunds[user, default: []].append(FeedRefundFact(identifier: stated.identifier, refund: stated.refund))
        }
        harvest.unclaimedStated += unclaimed.map { FeedRefundFact(identifier: $0.identifier, refund: $0.refund) }
        if !options.dryRun, let refunds, !owned.isEmpty {
            line.refundsNew = try await refunds.recordRefunds(runID: runID, owned.map { (userID: $0.userID, refund: $0.stated.refund) })
        }
        logger.info(
            "store feed read",
            metadata: [
                "feed.source": "\(read.source.rawValue)", "feed.entries": "\(entries.entries)",
                "feed.rejected": "\(entries.rejected)", "feed.users": "\(match.users)", "feed.unmatched": "\(match.unmatched)",
                "feed.refunds": "\(line.refunds)", "feed.refunds.new": "\(line.refundsNew)",
            ])
        return line
    }

    /// The users of this shard whose row holds each refund's identifier in `column`, with the refund (a sandbox refund
    /// only in a sandbox run): what `refunds_seen` keeps and the rows carry (`UserRow.feedRefunds`). Also the refunds
    /// whose identifier no row holds (in any shard), which the lookups match by their line's own keys
    /// (`UserRow.unclaimedFeedRefunds`, CONTRACT "Sources and the decision").
    func owners(
        of stated: [FeedRefund], column: FeedColumn
    ) async throws -> (owned: [(userID: String, stated: FeedRefund)], unclaimed: [FeedRefund]) {
        let kept = stated.filter { !(options.environment == .production && $0.isSandbox == true) }
        guard !kept.isEmpty else { return ([], []) }
        let owners = try await feeds.feedUserIDs(column: column, identifiers: kept.map(\.identifier))
        var pairs: [(userID: String, stated: FeedRefund)] = []
        var unclaimed: [FeedRefund] = []
        for refund in kept {
            let holders = owners[refund.identifier] ?? []
            if holders.isEmpty { unclaimed.append(refund) }
            for user in holders where options.shard.contains(user) {
                pairs.append((userID: user, stated: refund))
            }
        }
        return (pairs, unclaimed)
    }
}
