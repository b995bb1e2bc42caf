import Foundation
import Logging
import SourceHTTP
import SubreconCore
import SubreconDatabase
import SubreconReports

/// Reads the store feeds of a nightly run (SPEC 5.1) and records the users they name as candidates of the run
/// (`reconcile_run_candidates`), which the keyset scan unions with the SPEC 5.1 rules and the sweep: one stream,
/// each user asked once. A feed that fails is reported in the summary and the run goes on (exit 1 at most).
/// The refunds a feed's entries state are kept in `refunds_seen` like those a lookup states (SPEC 5.7): for every
/// user of this shard whose row holds the entry's identifier, never a sandbox refund in a production run, never in
/// a dry run, never from a failing feed.
struct FeedPhase: Sendable {
    var feeds: any FeedCandidates
    /// Where the feeds' refunds are kept (`refunds_seen`, SPEC 5.7); nil: not kept.
    var refunds: (any RefundRecords)?
    var source: any FactSource
    var options: RunOptions
    var runID: String
    var logger: Logger
    /// The wall clock, for the default window (a first run looks 3 days back from as-of).
    static let firstRunDays = 3.0
    static let maxDays = 7.0

    /// The window `[since, until)`: `--feeds-since`, else this shard's last completed nightly run's start, at most
    /// 7 days before as-of (3 on a first run).
    func window() async throws -> (since: Date, until: Date) {
        let until = options.asOf
        if let since = options.feedsSince { return (min(since, until), until) }
        let earliest = until.addingTimeInterval(-Self.maxDays * 86_400)
        if let last = try await feeds.lastCompletedNightlyStart(shard: options.shard) {
            return (min(max(last, earliest), until), until)
        }
        return (until.addingTimeInterval(-Self.firstRunDays * 86_400), until)
    }

    /// Reads every feed and records its candidates (a dry run keeps them in `named` instead: it writes nothing);
    /// returns the summary's feed lines.
    func run(named: inout [String: [CandidateReason]]) async throws -> [String: RunSummary.Feed] {
        let (since, until) = try await window()
        var report: [String: RunSummary.Feed] = [:]
        // The feeds' own deadline (`--feed-timeout`): a feed cut off by it is a failed feed, the run goes on.
        let reads = await LookupDeadline.run(within: options.feedDeadline) { [source] in await source.feeds(since: since, until: until) }
        for read in reads.value ?? [] {
            var line = RunSummary.Feed(since: ISO8601.string(since), until: ISO8601.string(until))
            switch read.result {
            case .failure(let error):
                line.error = error.message
                logger.warning(
                    "store feed failed; the run goes on without it",
                    metadata: ["feed.source": "\(read.source.rawValue)", "error": "\(error.message)"])
            case .success(let entries):
                line.entries = entries.entries
                line.rejected = entries.rejected
                let match: FeedMatch
                if options.dryRun {
                    let found = try await feeds.feedUsers(column: read.column, identifiers: entries.identifiers)
                    for user in found.users where !(named[user]?.contains(read.reason) ?? false) {
                        named[user, default: []].append(read.reason)
                    }
                    match = FeedMatch(users: Set(found.users).count, unmatched: found.unmatched)
                } else {
                    match = try await feeds.addFeedCandidates(
                        runID: runID, column: read.column, identifiers: entries.identifiers, reason: read.reason)
                }
                line.matchedUsers = match.users
                line.unmatched = match.unmatched
                // The same refund stated twice (REFUND then REVOKE, two events of one charge) is one refund.
                var seen = Set<FeedRefund>()
                let stated = entries.refunds.filter { seen.insert($0).inserted }
                line.refunds = stated.count
                if !options.dryRun, let refunds, !stated.isEmpty {
                    line.refundsNew = try await record(stated, column: read.column, into: refunds)
                }
                logger.info(
                    "store feed read",
                    metadata: [
                        "feed.source": "\(read.source.rawValue)", "feed.entries": "\(entries.entries)",
                        "feed.rejected": "\(entries.rejected)", "feed.users": "\(match.users)", "feed.unmatched": "\(match.unmatched)",
                        "feed.refunds": "\(line.refunds)", "feed.refunds.new": "\(line.refundsNew)",
                    ])
            }
            report[read.source.rawValue] = line
        }
        return report
    }

    /// Keeps `stated` for the users of this shard whose row holds each refund's identifier in `column` (a sandbox
    /// refund is kept only in a sandbox run); returns how many were new.
    func record(_ stated: [FeedRefund], column: FeedColumn, into records: any RefundRecords) async throws -> Int {
        let kept = stated.filter { !(options.environment == .production && $0.isSandbox == true) }
        guard !kept.isEmpty else { return 0 }
        let owners = try await feeds.feedUserIDs(column: column, identifiers: kept.map(\.identifier))
        var pairs: [(userID: String, refund: SeenRefund)] = []
        for refund in kept {
            for user in owners[refund.identifier] ?? [] where options.shard.contains(user) {
                pairs.append((userID: user, refund: refund.refund))
            }
        }
        guard !pairs.isEmpty else { return 0 }
        return try await records.recordRefunds(runID: runID, pairs)
    }
}
