import Foundation

/// What the job does to a row (CONTRACT "Reports" `action`).
public enum Action: String, Sendable, Codable, CaseIterable, Hashable {
    case downgrade
    case upgrade
    case restore
    case extend
    case statusChange = "status_change"
    case none
    case skipped
}

/// A kind of difference between the database and the truth (CONTRACT "Reports" `drift`). Findings are data.
public enum Drift: String, Sendable, Codable, CaseIterable, Hashable, Comparable {
    case missedExpiration = "missed_expiration"
    case missedRenewal = "missed_renewal"
    case billingIssueEntered = "billing_issue_entered"
    case billingIssueRecovered = "billing_issue_recovered"
    case graceExpired = "grace_expired"
    case missedRefund = "missed_refund"
    case productChange = "product_change"
    case sourceConflict = "source_conflict"
    /// The row named an older purchase of the line that entitles now; the newer identifier is written (CONTRACT "Whose purchase it is").
    case staleIdentifier = "stale_identifier"
    /// A purchase the row did not name was linked to it (its store named the user's account) and written (CONTRACT "Whose purchase it is").
    case linkedPurchase = "linked_purchase"
    /// A store names another owner of a line the row names, or linking would overwrite a different identifier:
    /// untouched, listed for a person (CONTRACT "Whose purchase it is").
    case ownershipConflict = "ownership_conflict"
    case sandboxIgnored = "sandbox_ignored"
    case unknownProduct = "unknown_product"
    case unknownAtSource = "unknown_at_source"
    case fetchError = "fetch_error"
    case verificationFailed = "verification_failed"
    /// The user's `users` row could not be read (a NULL where the contract says not null): untouched (CONTRACT "Hostile answers and bounded work").
    case rowError = "row_error"
    case concurrentUpdate = "concurrent_update"
    /// The database refused the job's write of the row: row-level security let the role read it but not update it, or
    /// the role lacks a privilege (docs/CONTRACT.md, "Applying"). Not written; the user is an error.
    case writeRefused = "write_refused"
    case inSync = "in_sync"

    private var order: Int { Self.allCases.firstIndex(of: self)! }
    public static func < (lhs: Drift, rhs: Drift) -> Bool { lhs.order < rhs.order }
}

/// The notification kinds of CONTRACT "Applying".
public enum PushIntentKind: String, Sendable, Codable, CaseIterable, Hashable {
    case billingIssue = "billing_issue"
    case expired
    case refunded
    case restored

    /// The action the app should offer, if any.
    public var appAction: String? {
        switch self {
        case .billingIssue: "UPDATE_PAYMENT"
        case .expired: "RESUBSCRIBE"
        case .refunded, .restored: nil
        }
    }
}

/// A notification the product should send (an intent, not a send).
public struct PushIntent: Sendable, Hashable, Codable {
    public var userID: String
    public var kind: PushIntentKind
    /// The paid period the intent is about, as its end instant (nil when unknown).
    public var periodEnd: Date?
    public var productID: String?
    public var tier: Int

    public init(userID: String, kind: PushIntentKind, periodEnd: Date?, productID: String?, tier: Int) {
        self.userID = userID
        self.kind = kind
        self.periodEnd = periodEnd
        self.productID = productID
        self.tier = tier
    }

    /// user id, kind and period: the same notification about the same period is queued once, ever.
    public var dedupeKey: String {
        "\(userID)|\(kind.rawValue)|\(periodEnd.map(ISO8601.string) ?? "none")"
    }
}

/// RevenueCat's and a store's differing views of one of that store's purchases. In `drift.json` the store's view is
/// keyed by its source name (`app_store`, `stripe`, `google_play`), beside `revenuecat`.
public struct SourceConflict: Sendable, Hashable, Codable {
    /// The store's source (the authority).
    public var store: FactOrigin
    public var originalTransactionID: String?
    public var productID: String
    public var revenueCat: PurchaseJudgement
    public var storeView: PurchaseJudgement

    public init(
        store: FactOrigin = .appStore, originalTransactionID: String?, productID: String, revenueCat: PurchaseJudgement,
        storeView: PurchaseJudgement
    ) {
        self.store = store
        self.originalTransactionID = originalTransactionID
        self.productID = productID
        self.revenueCat = revenueCat
        self.storeView = storeView
    }

    struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(_ string: String) { stringValue = string }
        init?(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Key.self)
        try c.encode(store, forKey: Key("store"))
        try c.encode(originalTransactionID, forKey: Key("original_transaction_id"))
        try c.encode(productID, forKey: Key("product_id"))
        try c.encode(revenueCat, forKey: Key("revenuecat"))
        try c.encode(storeView, forKey: Key(store.rawValue))
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Key.self)
        store = try c.decodeIfPresent(FactOrigin.self, forKey: Key("store")) ?? .appStore
        originalTransactionID = try c.decodeIfPresent(String.self, forKey: Key("original_transaction_id"))
        productID = try c.decode(String.self, forKey: Key("product_id"))
        revenueCat = try c.decode(PurchaseJudgement.self, forKey: Key("revenuecat"))
        storeView = try c.decode(PurchaseJudgement.self, forKey: Key(store.rawValue))
    }
}

/// How one purchase is judged at T.
public struct PurchaseJudgement: Sendable, Hashable, Codable {
    public var entitled: Bool
    public var status: SubscriptionStatus
    public var expiresDate: Date?

    public init(entitled: Bool, status: SubscriptionStatus, expiresDate: Date?) {
        self.entitled = entitled
        self.status = status
        self.expiresDate = expiresDate
    }

    enum CodingKeys: String, CodingKey {
        case entitled, status
        case expiresDate = "expires_date"
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(entitled, forKey: .entitled)
        try c.encode(status, forKey: .status)
        try c.encode(expiresDate.map(ISO8601.string), forKey: .expiresDate)
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        entitled = try c.decode(Bool.self, forKey: .entitled)
        status = try c.decode(SubscriptionStatus.self, forKey: .status)
        expiresDate = try c.decodeIfPresent(String.self, forKey: .expiresDate).flatMap(ISO8601.date)
    }
}

/// The outcome of judging one user: what the truth is, what differs and what to do. Pure data.
public struct Verdict: Sendable, Hashable, Codable {
    public var row: UserRow
    /// The truth at T; nil when the user was skipped before a truth could be formed.
    public var truth: Entitlement?
    public var action: Action
    public var drift: [Drift]
    public var intents: [PushIntent]
    /// Store of the granting (or most recent) purchase, for the report.
    public var store: StoreKind?
    /// The price of the purchase the verdict is about (granting or most recent), when the source gave it.
    public var price: Money?
    /// The price the verdict's finance figure carries (CONTRACT "Finance figures"): set for a user in a finance category (refund,
    /// billing issue, restored), nil otherwise.
    public var financePrice: FinancePrice?
    /// The refunded purchases the sources stated for the user (CONTRACT "Finance figures" refund review); nil before any was looked for.
    public var refunds: [SeenRefund]?
    public var conflicts: [SourceConflict]
    /// Every source asked for this user, in order (CONTRACT "Reports" `sources`).
    public var sources: [FactOrigin]
    /// Why the user was a candidate (CONTRACT "Reports" `candidate_reason`); set by the run, not by `decide`.
    public var candidateReasons: [CandidateReason] = []
    /// Why a skipped user is an error, as a value (`Problem`); its text is made where it is printed.
    public var error: Problem?
    /// Lines this user owns tonight that other rows name (`LineTransfer`); nil when none.
    public var transfers: [LineTransfer]?
    /// The entitled products `product_tiers` does not map (`unknown_product`), as the sources named them; nil
    /// otherwise. The list a reader takes (`products check`), never the `error` sentence.
    public var missingProducts: [String]? { error?.missingProducts }

    public init(
        row: UserRow, truth: Entitlement?, action: Action, sources: [FactOrigin] = [], drift: [Drift],
        intents: [PushIntent] = [], store: StoreKind? = nil, price: Money? = nil, conflicts: [SourceConflict] = [],
        error: Problem? = nil
    ) {
        self.sources = sources
        self.row = row
        self.truth = truth
        self.action = action
        self.drift = drift
        self.intents = intents
        self.store = store
        self.price = price
        self.conflicts = conflicts
        self.financePrice = nil
        self.error = error
    }

    /// The verdict of a row that could not be read (`row.rowError`): skipped, `row_error`, no source asked.
    public static func unreadable(_ row: UserRow) -> Verdict {
        Verdict(
            row: row, truth: nil, action: .skipped, drift: [.rowError],
            error: .unreadableRow(row.rowError))
    }

    /// True when the row would be written.
    public var changesRow: Bool { action != .none && action != .skipped }
    /// True when the user held a tier and the truth removes it (the safety valve's numerator).
    public var losesTier: Bool { row.currentTier > 0 && (truth?.tier ?? row.currentTier) == 0 && changesRow }
    /// True when the verdict is an error for the user (exit code 1).
    /// A user skipped because the sources would bind a purchase another row holds counts too.
    public var isError: Bool {
        drift.contains(.fetchError) || drift.contains(.verificationFailed) || drift.contains(.rowError)
            || (action == .skipped && drift.contains(.sourceConflict) && !drift.contains(.unknownProduct))
    }
}

/// ISO 8601 UTC formatting used in reports and keys: whole seconds, or milliseconds when present.
public enum ISO8601 {
    /// The instant to the millisecond the source stated, rounded, never truncated: the milliseconds are written from
    /// the integer count (a formatter given `…58.27` as binary floating point prints `…58.269`).
    public static func string(_ date: Date) -> String {
        let millis = Int64(exactly: (date.timeIntervalSince1970 * 1000).rounded()) ?? 0
        let (seconds, fraction) = (millis - ((millis % 1000) + 1000) % 1000, ((millis % 1000) + 1000) % 1000)
        let style = Date.ISO8601FormatStyle(includingFractionalSeconds: false, timeZone: TimeZone(identifier: "UTC")!)
        let whole = Date(timeIntervalSince1970: Double(seconds / 1000)).formatted(style)
        guard fraction != 0, whole.hasSuffix("Z") else { return whole }
        let digits = String(fraction)
        return whole.dropLast() + "." + String(repeating: "0", count: 3 - digits.count) + digits + "Z"
    }

    /// Parses ISO 8601 with or without fractional seconds.
    public static func date(_ text: String) -> Date? {
        let plain = Date.ISO8601FormatStyle()
        if let date = try? plain.parse(text) { return date }
        return try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(text)
    }
}
