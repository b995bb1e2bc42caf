import Foundation
import SubreconCore
import SubreconJob
import SubreconPorts
import Synchronization

// The feeds' and links' ports in memory (`reconcile_run_candidates`, `reconcile_feed_windows`, `reconcile_run_links`,
// `reconcile_orphans`), as `PostgresFeedCandidates` (and `+Windows`) and `PostgresPurchaseLinks` (and `+Orphans`) keep them.

extension InMemoryDatabase: FeedCandidates {
    /// The value of `column` in `row` (`iap_original_transaction_id`, or one of the stores' identifier columns).
    func value(of column: FeedColumn, in row: UserRow) -> String? {
        if column == .appleOriginalTransactionID { return row.originalTransactionID }
        guard let origin = identifierColumns.first(where: { $0.name == column.rawValue })?.origin else { return nil }
        return row.identifiers[origin]
    }

    /// The distinct identifiers a row can hold (an empty or whitespace-only one names no purchase), sorted.
    static func held(_ identifiers: [String]) -> [String] {
        Array(Set(identifiers.compactMap(UserRow.storedIdentifier))).sorted()
    }

    /// The rows whose `column` holds one of `identifiers` (id order), and how many identifiers match none.
    func named(column: FeedColumn, identifiers: [String], freeOnly: Bool) -> (users: [UserRow], unmatched: Int) {
        let wanted = Set(Self.held(identifiers))
        let rows = users.filter { row in value(of: column, in: row).map { wanted.contains($0) } == true }
        let matched = Set(rows.compactMap { value(of: column, in: $0) })
        return (rows.filter { !freeOnly || $0.currentTier == 0 }, wanted.subtracting(matched).count)
    }

    func addCandidates(runID: String, _ userIDs: [String], reason: CandidateReason) {
        state.withLock { state in
            for id in userIDs {
                var reasons = state.runCandidates[runID, default: [:]][id] ?? []
                if !reasons.contains(reason) { reasons.append(reason) }
                state.runCandidates[runID, default: [:]][id] = reasons
            }
        }
    }

    public func addFeedCandidates(
        runID: String, column: FeedColumn, identifiers: [String], reason: CandidateReason, freeOnly: Bool
    ) async throws -> FeedMatch {
        let (rows, unmatched) = named(column: column, identifiers: identifiers, freeOnly: freeOnly)
        addCandidates(runID: runID, rows.map(\.id), reason: reason)
        return FeedMatch(users: rows.count, unmatched: unmatched)
    }

    public func feedUsers(column: FeedColumn, identifiers: [String], freeOnly: Bool) async throws -> (users: [String], unmatched: Int) {
        let (rows, unmatched) = named(column: column, identifiers: identifiers, freeOnly: freeOnly)
        return (rows.map(\.id), unmatched)
    }

    public func feedUserIDs(column: FeedColumn, identifiers: [String]) async throws -> [String: [String]] {
        var found: [String: [String]] = [:]
        for row in named(column: column, identifiers: identifiers, freeOnly: false).users {
            if let value = value(of: column, in: row) { found[value, default: []].append(row.id) }
        }
        return found
    }

    public func lastCompletedNightlyStart(shard: ShardSpec) async throws -> Date? {
        state.withLock { state in
            state.runs.values.filter {
                $0.record.status == .completed && $0.record.mode == .nightly && !$0.record.dryRun && $0.record.shard == shard
            }.map(\.record.startedAt).max()
        }
    }

    /// Every window begun for `feed` by this shard: covered when read to its end by a run that completed.
    public func feedAttempts(feed: String, shard: ShardSpec, asOf: Date, days: Double) async throws -> [FeedAttempt]? {
        state.withLock { state in
            let windows = state.feedWindows.filter { $0.feed == feed && $0.shard == shard }
            guard !windows.isEmpty else { return nil }
            return windows.map {
                FeedAttempt(since: $0.since, until: $0.until, covered: $0.complete && state.runs[$0.runID]?.record.status == .completed)
            }
        }
    }

    public func beginFeedWindow(runID: String, feed: String, shard: ShardSpec, since: Date, until: Date) async throws {
        state.withLock {
            $0.feedWindows.append(FeedWindow(runID: runID, feed: feed, shard: shard, since: since, until: until, complete: false))
        }
    }

    public func completeFeedWindow(runID: String, feed: String) async throws {
        state.withLock { state in
            for index in state.feedWindows.indices where state.feedWindows[index].runID == runID && state.feedWindows[index].feed == feed {
                state.feedWindows[index].complete = true
            }
        }
    }

    /// Tonight's sweep shares of the shard's rows, recorded as candidates of `runID` (idempotent).
    public func recordSweep(_ query: CandidateQuery, runID: String) async throws {
        for row in users where query.shard.contains(row.id) {
            for reason in CandidateRulesModel.sweeps(query, row) { addCandidates(runID: runID, [row.id], reason: reason) }
        }
    }
}

extension InMemoryDatabase: PurchaseLinks {
    /// The users whose id or `account_token` names each account (an Apple token compared without case).
    public func owners(ofAccounts accounts: [BuyerAccount]) async throws -> [BuyerAccount: [String]] {
        let rows = users
        var owners: [BuyerAccount: [String]] = [:]
        for account in Set(accounts) {
            let ids = rows.filter { account.matches($0.id) || account.matches($0.accountToken) }.map(\.id)
            if !ids.isEmpty { owners[account] = ids }
        }
        return owners
    }

    public func heldIdentifiers(column: FeedColumn, identifiers: [String]) async throws -> Set<String> {
        Set(named(column: column, identifiers: identifiers, freeOnly: false).users.compactMap { value(of: column, in: $0) })
    }

    /// Keeps the first link of a user and source, and makes its user a `linked_purchase` candidate.
    public func addLinks(runID: String, _ links: [PurchaseLink]) async throws {
        let kept = links.filter { !$0.userID.isEmpty && !$0.identifier.isEmpty }
        state.withLock { state in
            for link in kept where state.links[runID, default: [:]][link.userID, default: [:]][link.origin] == nil {
                state.links[runID, default: [:]][link.userID, default: [:]][link.origin] = link.identifier
            }
        }
        addCandidates(runID: runID, kept.map(\.userID), reason: .linkedPurchase)
    }

    public func links(runID: String) async throws -> [String: [FactOrigin: String]] {
        state.withLock { $0.links[runID] ?? [:] }
    }

    /// Keeps tonight's orphans across nights (first and last night seen, by store and identifier).
    public func recordOrphans(runID: String, night: Date, _ orphans: [Orphan]) async throws -> [Orphan] {
        state.withLock { state in
            let kept = orphans.map { orphan in
                let key = "\(orphan.origin.rawValue)|\(orphan.identifier)"
                var stored = orphan
                stored.firstSeen = state.keptOrphans[key]?.firstSeen ?? night
                stored.lastSeen = night
                state.keptOrphans[key] = stored
                return stored
            }
            state.orphans[runID] = kept
            return kept
        }
    }

    public func orphans(runID: String) async throws -> [Orphan] { state.withLock { $0.orphans[runID] ?? [] } }
}
