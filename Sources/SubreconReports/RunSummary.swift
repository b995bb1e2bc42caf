import Foundation
import SubreconCore

/// `summary.json`: what a run did, in numbers (CONTRACT "Reports", "Finance figures").
public struct RunSummary: Sendable, Codable {
    public struct Timings: Sendable, Codable {
        public var totalSeconds: Double = 0
        public var validateSeconds: Double = 0
        public var applySeconds: Double = 0
        public init() {}
        enum CodingKeys: String, CodingKey {
            case totalSeconds = "total_seconds"
            case validateSeconds = "validate_seconds"
            case applySeconds = "apply_seconds"
        }
    }

    public struct SourceRequests: Sendable, Codable {
        public var requests = 0
        public var rateLimited = 0
        public var failures = 0
        public init() {}
        enum CodingKeys: String, CodingKey {
            case requests
            case rateLimited = "rate_limited"
            case failures
        }
    }

    /// The safety valve (CONTRACT "Applying"); the same value the job decided by.
    public typealias Valve = SafetyValve

    public struct ErrorSample: Sendable, Codable {
        public var userID: String
        public var drift: String
        public var error: String
        enum CodingKeys: String, CodingKey {
            case userID = "user_id"
            case drift, error
        }
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
    public var status: RunStatus = .running
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
    /// The store feeds read, by source (CONTRACT "Which users a run asks about"); empty when none was read.
    public var feeds: [String: Feed]? = [:]
    /// The refund review (CONTRACT "Finance figures"): users listed in `refund_review.csv`; nil when the run kept no refunds.
    public var refundReview: RefundReview?
    /// Sources declared down during the run (CONTRACT "Hostile answers and bounded work"): not asked after `since`; nil or empty when none was.
    public var sourcesDown: [SourceDown]?
    /// Unlinked paying purchases listed in `orphans.csv` (CONTRACT "Reports", "Whose purchase it is"); nil when the run kept none.
    public var orphans: Orphans?
    /// How `--users-file`'s ids met `users`; nil for a run without one.
    public var usersFile: UsersFile?

    /// How many users the refund review lists, and by which rule.
    public struct RefundReview: Sendable, Codable, Hashable {
        /// Users with at least `minimumRefunds` refunds dated within `days` days before the run's as-of.
        public var users: Int
        public var minimumRefunds: Int
        public var days: Int
        /// Refunds this run saw for the first time (0 on a rerun of the same night).
        public var newRefunds: Int

        public init(users: Int, minimumRefunds: Int, days: Int, newRefunds: Int) {
            self.users = users
            self.minimumRefunds = minimumRefunds
            self.days = days
            self.newRefunds = newRefunds
        }

        enum CodingKeys: String, CodingKey {
            case users
            case minimumRefunds = "minimum_refunds"
            case days
            case newRefunds = "new_refunds"
        }
    }

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
        /// Refunds the believed entries stated (CONTRACT "Finance figures"), whether or not they belong to a user of this run.
        public var refunds = 0
        /// Refunds kept in `refunds_seen` for the first time by this feed (0 in a dry run and on a rerun).
        public var refundsNew = 0
        /// Purchases no row named, linked tonight to the user whose account their store named (CONTRACT "Whose purchase it is").
        public var linked = 0
        /// Purchases no row named whose store named no known account, and which entitle today: orphans (CONTRACT "Whose purchase it is").
        public var orphans = 0
        /// Why the feed failed or ended incomplete (the run went on without it).
        public var error: String?
        /// Read to its end over `[since, until)`: the window is covered once the run completes (CONTRACT "Hostile answers and bounded work"); false
        /// with `error` saying why.
        public var complete = true

        public init(since: String, until: String) {
            self.since = since
            self.until = until
        }

        enum CodingKeys: String, CodingKey {
            case since, until, entries, rejected
            case matchedUsers = "matched_users"
            case unmatched, error, complete
            case refunds, linked, orphans
            case refundsNew = "refunds_new"
        }

        /// Summaries stored before a field existed read it as 0 (or nil).
        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            since = try c.decode(String.self, forKey: .since)
            until = try c.decode(String.self, forKey: .until)
            entries = try c.decodeIfPresent(Int.self, forKey: .entries) ?? 0
            rejected = try c.decodeIfPresent(Int.self, forKey: .rejected) ?? 0
            matchedUsers = try c.decodeIfPresent(Int.self, forKey: .matchedUsers) ?? 0
            unmatched = try c.decodeIfPresent(Int.self, forKey: .unmatched) ?? 0
            refunds = try c.decodeIfPresent(Int.self, forKey: .refunds) ?? 0
            refundsNew = try c.decodeIfPresent(Int.self, forKey: .refundsNew) ?? 0
            linked = try c.decodeIfPresent(Int.self, forKey: .linked) ?? 0
            orphans = try c.decodeIfPresent(Int.self, forKey: .orphans) ?? 0
            error = try c.decodeIfPresent(String.self, forKey: .error)
            complete = try c.decodeIfPresent(Bool.self, forKey: .complete) ?? (error == nil)
        }
    }

    enum CodingKeys: String, CodingKey {
        case runID = "run_id"
        case mode
        case asOf = "as_of"
        case shard
        case dryRun = "dry_run"
        case status
        case exitCode = "exit_code"
        case startedAt = "started_at"
        case finishedAt = "finished_at"
        case timings, sources, candidates, actions, drift, applied
        case concurrentUpdates = "concurrent_updates"
        case errors
        case errorSamples = "error_samples"
        case requests
        case intentsQueued = "intents_queued"
        case intentsDeduplicated = "intents_deduplicated"
        case valve, finance
        case candidateReasons = "candidate_reasons"
        case feeds
        case refundReview = "refund_review"
        case sourcesDown = "sources_down"
        case orphans
        case usersFile = "users_file"
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
        copy.refundReview = refundReview
        copy.sourcesDown = sourcesDown
        copy.orphans = orphans
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
        if row.drift.contains(Drift.fetchError.rawValue) || row.drift.contains(Drift.verificationFailed.rawValue)
            || row.drift.contains(Drift.rowError.rawValue) || row.drift.contains(Drift.writeRefused.rawValue)
        {
            errors += 1
            if errorSamples.count < 50 {
                errorSamples.append(ErrorSample(userID: row.userID, drift: row.drift.joined(separator: ";"), error: row.error ?? ""))
            }
        }
    }
}

/// Finance figures per store, currency and group, and drift counts per product (CONTRACT "Finance figures").
/// Every figure is the sum of the `drift.json` rows of its category: values come only from the rows' source prices;
/// a missing price is counted, never guessed; family-shared and trial rows are counted in their own buckets at 0.
public struct FinanceFigures: Sendable, Codable {
    public struct Figure: Sendable, Codable, Hashable {
        public var count = 0
        public var value: Decimal = 0
        public var unknownPrice = 0
        public init() {}
        enum CodingKeys: String, CodingKey {
            case count, value
            case unknownPrice = "unknown_price"
        }
    }

    /// Which money a bucket holds: `revenue` (paid, renewal and unknown prices), `family_shared` or `trial` (0).
    public enum Group: String, Sendable, Codable, Hashable, CaseIterable {
        case revenue
        case familyShared = "family_shared"
        case trial

        init(basis: String?) {
            switch basis {
            case PriceBasis.familyShared.rawValue?: self = .familyShared
            case PriceBasis.trial.rawValue?: self = .trial
            default: self = .revenue
            }
        }
    }

    public struct Bucket: Sendable, Codable, Hashable {
        public var store: String
        public var currency: String
        public var group: Group = .revenue
        public var refunds = Figure()
        public var billingIssueAtRisk = Figure()
        public var restored = Figure()
        enum CodingKeys: String, CodingKey {
            case store, currency, group, refunds
            case billingIssueAtRisk = "billing_issue_at_risk"
            case restored
        }

        public init(store: String, currency: String, group: Group = .revenue) {
            self.store = store
            self.currency = currency
            self.group = group
        }

        /// Summaries written before the groups existed decode as `revenue`.
        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            store = try c.decode(String.self, forKey: .store)
            currency = try c.decode(String.self, forKey: .currency)
            group = try c.decodeIfPresent(Group.self, forKey: .group) ?? .revenue
            refunds = try c.decodeIfPresent(Figure.self, forKey: .refunds) ?? Figure()
            billingIssueAtRisk = try c.decodeIfPresent(Figure.self, forKey: .billingIssueAtRisk) ?? Figure()
            restored = try c.decodeIfPresent(Figure.self, forKey: .restored) ?? Figure()
        }

        /// Report order: store, currency, then revenue, family shared, trial.
        static func < (a: Bucket, b: Bucket) -> Bool {
            let ga = Group.allCases.firstIndex(of: a.group) ?? 0
            let gb = Group.allCases.firstIndex(of: b.group) ?? 0
            return (a.store, a.currency, ga) < (b.store, b.currency, gb)
        }
    }

    /// Keyed "store|currency" for revenue, "store|currency|group" for the other groups; currency "unknown" when
    /// the source gave no price.
    public var buckets: [String: Bucket] = [:]
    public var driftByProduct: [String: [String: Int]] = [:]

    enum CodingKeys: String, CodingKey {
        case buckets
        case driftByProduct = "drift_by_product"
    }

    public init() {}

    /// The buckets in report order.
    public var sortedBuckets: [Bucket] { buckets.values.sorted(by: <) }

    /// The revenue buckets (paid, renewal and unknown prices), in report order.
    public var revenueBuckets: [Bucket] { sortedBuckets.filter { $0.group == .revenue } }

    /// Counts one reported row: its drift per product, and its price into each finance figure it is in (read from
    /// the row's own `price_amount`, `price_currency` and `price_basis`, so the figures add up from `drift.json`).
    public mutating func add(_ row: ReportRow) {
        let product = row.productID ?? "unknown"
        for kind in row.drift where kind != Drift.inSync.rawValue {
            driftByProduct[product, default: [:]][kind, default: 0] += 1
        }
        let categories = row.financeCategories
        guard !categories.isEmpty else { return }
        let store = row.store ?? "unknown"
        let currency = row.priceCurrency ?? "unknown"
        let group = Group(basis: row.priceBasis)
        let key = group == .revenue ? "\(store)|\(currency)" : "\(store)|\(currency)|\(group.rawValue)"
        var bucket = buckets[key] ?? Bucket(store: store, currency: currency, group: group)
        let amount = row.priceAmount.flatMap { Decimal(string: $0, locale: Locale(identifier: "en_US_POSIX")) }
        func tally(_ figure: inout Figure) {
            figure.count += 1
            if let amount { figure.value += amount } else { figure.unknownPrice += 1 }
        }
        for category in categories {
            switch category {
            case .refund: tally(&bucket.refunds)
            case .billingIssueAtRisk: tally(&bucket.billingIssueAtRisk)
            case .restored: tally(&bucket.restored)
            }
        }
        buckets[key] = bucket
    }
}
