import Foundation
import SubreconCore

/// `summary.json`: what a run did, in numbers (SPEC 5.6, 5.7).
public struct RunSummary: Sendable, Codable {
    public struct Timings: Sendable, Codable {
        public var totalSeconds: Double = 0
        public var validateSeconds: Double = 0
        public var applySeconds: Double = 0
        public init() {}
        enum CodingKeys: String, CodingKey {
            case totalSeconds = "total_seconds", validateSeconds = "validate_seconds", applySeconds = "apply_seconds"
        }
    }

    public struct SourceRequests: Sendable, Codable {
        public var requests = 0
        public var rateLimited = 0
        public var failures = 0
        public init() {}
        enum CodingKeys: String, CodingKey { case requests, rateLimited = "rate_limited", failures }
    }

    /// The safety valve (SPEC 5.5); the same value the job decided by.
    public typealias Valve = SafetyValve

    public struct ErrorSample: Sendable, Codable {
        public var userID: String
        public var drift: String
        public var error: String
        enum CodingKeys: String, CodingKey { case userID = "user_id", drift, error }
        public init(userID: String, drift: String, error: String) {
            self.userID = userID
            self.drift = drift
            self.error = error
        }
    }

    public var runID: String
    public var mode: String
    public var asOf: String
    public var shard: String
    public var dryRun: Bool
    public var status: String = "running"
    public var exitCode: Int = 0
    public var startedAt: String
    public var finishedAt: String?
    public var timings = Timings()
    public var sources: [String: String] = [:]
    public var candidates = 0
    public var actions: [String: Int] = [:]
    public var drift: [String: Int] = [:]
    public var applied = 0
    public var concurrentUpdates = 0
    public var errors = 0
    public var errorSamples: [ErrorSample] = []
    public var requests: [String: SourceRequests] = [:]
    public var intentsQueued = 0
    public var intentsDeduplicated = 0
    public var valve: Valve?
    public var finance = FinanceFigures()
    /// Candidates per `candidate_reason` (a user named by several reasons counts under each).
    /// (Optional only so summaries stored by older versions still decode.)
    public var candidateReasons: [String: Int]? = [:]
    /// The store feeds read, by source (SPEC 5.1); empty when none was read.
    public var feeds: [String: Feed]? = [:]

    /// One store feed's window and what it gave.
    public struct Feed: Sendable, Codable, Hashable {
        public var since: String
        public var until: String
        /// Entries believed (deduplicated by the feed's own id).
        public var entries = 0
        /// Entries that failed verification: counted, ignored.
        public var rejected = 0
        /// Users the entries named (candidates of the run).
        public var matchedUsers = 0
        /// Distinct identifiers that matched no row: counted, not acted on.
        public var unmatched = 0
        /// Why the feed failed (the run went on without it).
        public var error: String?

        public init(since: String, until: String) {
            self.since = since
            self.until = until
        }

        enum CodingKeys: String, CodingKey {
            case since, until, entries, rejected, matchedUsers = "matched_users", unmatched, error
        }
    }

    enum CodingKeys: String, CodingKey {
        case runID = "run_id", mode, asOf = "as_of", shard, dryRun = "dry_run", status, exitCode = "exit_code"
        case startedAt = "started_at", finishedAt = "finished_at", timings, sources, candidates, actions, drift, applied
        case concurrentUpdates = "concurrent_updates", errors, errorSamples = "error_samples", requests
        case intentsQueued = "intents_queued", intentsDeduplicated = "intents_deduplicated", valve, finance
        case candidateReasons = "candidate_reasons", feeds
    }

    public init(runID: String, mode: String, asOf: Date, shard: String, dryRun: Bool, startedAt: Date) {
        self.runID = runID
        self.mode = mode
        self.asOf = ISO8601.string(asOf)
        self.shard = shard
        self.dryRun = dryRun
        self.startedAt = ISO8601.string(startedAt)
        for action in Action.allCases { actions[action.rawValue] = 0 }
        for kind in Drift.allCases { drift[kind.rawValue] = 0 }
    }

    /// The same run with every count rendered from its rows cleared (to render them again from the ledger).
    public func withCountsCleared() -> RunSummary {
        var copy = RunSummary(
            runID: runID, mode: mode, asOf: ISO8601.date(asOf) ?? Date(timeIntervalSince1970: 0), shard: shard,
            dryRun: dryRun, startedAt: ISO8601.date(startedAt) ?? Date(timeIntervalSince1970: 0))
        copy.asOf = asOf
        copy.startedAt = startedAt
        copy.status = status
        copy.exitCode = exitCode
        copy.finishedAt = finishedAt
        copy.timings = timings
        copy.sources = sources
        copy.requests = requests
        copy.valve = valve
        copy.feeds = feeds
        return copy
    }

    /// Counts one reported row.
    public mutating func count(_ row: ReportRow) {
        candidates += 1
        for reason in row.candidateReason { candidateReasons?[reason, default: 0] += 1 }
        actions[row.action, default: 0] += 1
        for kind in row.drift { drift[kind, default: 0] += 1 }
        if row.applied { applied += 1 }
        if row.drift.contains(Drift.concurrentUpdate.rawValue) { concurrentUpdates += 1 }
        if row.drift.contains(Drift.fetchError.rawValue) || row.drift.contains(Drift.verificationFailed.rawValue) {
            errors += 1
            if errorSamples.count < 50 {
                errorSamples.append(ErrorSample(userID: row.userID, drift: row.drift.joined(separator: ";"), error: row.error ?? ""))
            }
        }
    }
}

/// Finance figures per store and currency, and drift counts per product (SPEC 5.7).
/// Values come only from source prices; a missing price is counted, never guessed.
public struct FinanceFigures: Sendable, Codable {
    public struct Figure: Sendable, Codable, Hashable {
        public var count = 0
        public var value: Decimal = 0
        public var unknownPrice = 0
        public init() {}
        enum CodingKeys: String, CodingKey { case count, value, unknownPrice = "unknown_price" }
    }

    public struct Bucket: Sendable, Codable, Hashable {
        public var store: String
        public var currency: String
        public var refunds = Figure()
        public var billingIssueAtRisk = Figure()
        public var restored = Figure()
        enum CodingKeys: String, CodingKey {
            case store, currency, refunds, billingIssueAtRisk = "billing_issue_at_risk", restored
        }
    }

    /// Keyed "store|currency"; currency "unknown" when the source gave no price.
    public var buckets: [String: Bucket] = [:]
    public var driftByProduct: [String: [String: Int]] = [:]

    enum CodingKeys: String, CodingKey { case buckets, driftByProduct = "drift_by_product" }

    public init() {}

    public mutating func add(_ verdict: Verdict) {
        let product = verdict.truth?.productID ?? verdict.row.productID ?? "unknown"
        for kind in verdict.drift where kind != .inSync {
            driftByProduct[product, default: [:]][kind.rawValue, default: 0] += 1
        }
        guard let truth = verdict.truth else { return }
        let revokedByRefund = verdict.row.currentTier > 0 && truth.tier == 0 && truth.status == .refunded
        let inBillingIssue = truth.status == .billingIssue && truth.tier > 0
        let restored = verdict.action == .restore
        guard revokedByRefund || inBillingIssue || restored else { return }
        let store = verdict.store?.rawValue ?? verdict.row.source.map { StoreKind(subscriptionSource: $0).rawValue } ?? "unknown"
        let currency = verdict.price?.currency ?? "unknown"
        let key = "\(store)|\(currency)"
        var bucket = buckets[key] ?? Bucket(store: store, currency: currency)
        func tally(_ figure: inout Figure) {
            figure.count += 1
            if let price = verdict.price { figure.value += price.amount } else { figure.unknownPrice += 1 }
        }
        if revokedByRefund { tally(&bucket.refunds) }
        if inBillingIssue { tally(&bucket.billingIssueAtRisk) }
        if restored { tally(&bucket.restored) }
        buckets[key] = bucket
    }
}
