import Foundation
import SubreconCore

/// One line of `drift.csv` / `drift.json` (CONTRACT "Reports"). Column order is the contract.
public struct ReportRow: Sendable, Hashable, Codable {
    public static let columns = [
        "run_id", "user_id", "store", "product_id", "db_tier", "db_status", "db_end_date", "truth_tier", "truth_status",
        "truth_end_date", "action", "drift", "applied", "push_intent", "error", "sources", "candidate_reason",
    ]

    public var runID: String
    public var userID: String
    public var store: String?
    public var productID: String?
    public var dbTier: Int
    public var dbStatus: String
    public var dbEndDate: Date?
    public var truthTier: Int?
    public var truthStatus: String?
    public var truthEndDate: Date?
    public var action: String
    public var drift: [String]
    public var applied: Bool
    public var pushIntent: [String]
    public var error: String?
    /// The sources asked for the user (`revenuecat`, `app_store`, `app_store_receipt`, `stripe`, `google_play`).
    public var sources: [String]
    /// Why the user was a candidate (`expired`, `billing_issue`, `lapsed`, `sweep`, `users_file`, `backfill`, ...).
    public var candidateReason: [String]
    /// Both views when RevenueCat and a store disagree (drift.json only).
    public var conflicts: [SourceConflict]
    /// `drift.json` only: the entitled products `product_tiers` does not map (`unknown_product`), a list (absent when
    /// none); `products check` reads it, never the `error` sentence.
    public var missingProducts: [String] = []
    /// The exact price of the row's finance figure (CONTRACT "Finance figures"; drift.json only): a plain decimal string (`9.99`,
    /// `1200`, `3.500`), nil when unknown or when the row is in no finance figure.
    public var priceAmount: String?
    /// The currency of `priceAmount` (ISO 4217), nil when no source stated one.
    public var priceCurrency: String?
    /// `paid`, `renewal`, `family_shared`, `trial` or `unknown` for a row in a finance figure; nil otherwise.
    public var priceBasis: String?

    enum CodingKeys: String, CodingKey {
        case runID = "run_id"
        case userID = "user_id"
        case store
        case productID = "product_id"
        case dbTier = "db_tier"
        case dbStatus = "db_status"
        case dbEndDate = "db_end_date"
        case truthTier = "truth_tier"
        case truthStatus = "truth_status"
        case truthEndDate = "truth_end_date"
        case action, drift, applied
        case pushIntent = "push_intent"
        case error, sources
        case candidateReason = "candidate_reason"
        case conflicts
        case missingProducts = "missing_products"
        case priceAmount = "price_amount"
        case priceCurrency = "price_currency"
        case priceBasis = "price_basis"
    }

    /// Builds the row for a verdict and what applying it did.
    public init(
        runID: String, verdict: Verdict, applied: Bool, extraDrift: [Drift] = [], intents: [PushIntentKind]? = nil, error: String? = nil
    ) {
        self.runID = runID
        self.userID = verdict.row.id
        self.store = verdict.store?.rawValue ?? verdict.row.source.map { StoreKind(subscriptionSource: $0).rawValue }
        self.productID = verdict.truth?.productID ?? verdict.row.productID
        self.dbTier = verdict.row.currentTier
        self.dbStatus = verdict.row.statusText
        self.dbEndDate = verdict.row.endDate
        self.truthTier = verdict.truth?.tier
        self.truthStatus = verdict.truth?.status.rawValue
        self.truthEndDate = verdict.truth?.endDate
        self.action = verdict.action.rawValue
        var kinds = Set(verdict.drift)
        kinds.formUnion(extraDrift)
        if !extraDrift.isEmpty { kinds.remove(.inSync) }
        self.drift = kinds.sorted().map(\.rawValue)
        self.applied = applied
        self.pushIntent = (intents ?? verdict.intents.map(\.kind)).map(\.rawValue)
        self.error = error ?? verdict.error?.description
        self.sources = verdict.sources.map(\.rawValue)
        self.candidateReason = verdict.candidateReasons.map(\.rawValue)
        self.conflicts = verdict.conflicts
        self.missingProducts = verdict.missingProducts ?? []
        if !financeCategories.isEmpty {
            let price = verdict.financePrice ?? .unknown
            self.priceAmount = price.amount.map(FinanceCSV.decimalString)
            self.priceCurrency = price.currency
            self.priceBasis = price.basis.rawValue
        }
    }

    /// The finance figures this row counts in (CONTRACT "Finance figures"), read from the row itself.
    public var financeCategories: [FinanceCategory] {
        FinanceCategory.of(dbTier: dbTier, truthTier: truthTier, truthStatus: truthStatus, action: action)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(runID, forKey: .runID)
        try c.encode(userID, forKey: .userID)
        try c.encode(store, forKey: .store)
        try c.encode(productID, forKey: .productID)
        try c.encode(dbTier, forKey: .dbTier)
        try c.encode(dbStatus, forKey: .dbStatus)
        try c.encode(dbEndDate.map(ISO8601.string), forKey: .dbEndDate)
        try c.encode(truthTier, forKey: .truthTier)
        try c.encode(truthStatus, forKey: .truthStatus)
        try c.encode(truthEndDate.map(ISO8601.string), forKey: .truthEndDate)
        try c.encode(action, forKey: .action)
        try c.encode(drift.joined(separator: ";"), forKey: .drift)
        try c.encode(applied, forKey: .applied)
        try c.encode(pushIntent.joined(separator: ";"), forKey: .pushIntent)
        try c.encode(error, forKey: .error)
        try c.encode(sources.joined(separator: ";"), forKey: .sources)
        try c.encode(candidateReason.joined(separator: ";"), forKey: .candidateReason)
        if !conflicts.isEmpty { try c.encode(conflicts, forKey: .conflicts) }
        if !missingProducts.isEmpty { try c.encode(missingProducts, forKey: .missingProducts) }
        try c.encode(priceAmount, forKey: .priceAmount)
        try c.encode(priceCurrency, forKey: .priceCurrency)
        try c.encode(priceBasis, forKey: .priceBasis)
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        runID = try c.decode(String.self, forKey: .runID)
        userID = try c.decode(String.self, forKey: .userID)
        store = try c.decodeIfPresent(String.self, forKey: .store)
        productID = try c.decodeIfPresent(String.self, forKey: .productID)
        dbTier = try c.decode(Int.self, forKey: .dbTier)
        dbStatus = try c.decode(String.self, forKey: .dbStatus)
        dbEndDate = try c.decodeIfPresent(String.self, forKey: .dbEndDate).flatMap(ISO8601.date)
        truthTier = try c.decodeIfPresent(Int.self, forKey: .truthTier)
        truthStatus = try c.decodeIfPresent(String.self, forKey: .truthStatus)
        truthEndDate = try c.decodeIfPresent(String.self, forKey: .truthEndDate).flatMap(ISO8601.date)
        action = try c.decode(String.self, forKey: .action)
        drift = try c.decode(String.self, forKey: .drift).split(separator: ";").map(String.init)
        applied = try c.decode(Bool.self, forKey: .applied)
        pushIntent = try c.decode(String.self, forKey: .pushIntent).split(separator: ";").map(String.init)
        error = try c.decodeIfPresent(String.self, forKey: .error)
        sources = try c.decodeIfPresent(String.self, forKey: .sources).map { $0.split(separator: ";").map(String.init) } ?? []
        candidateReason =
            try c.decodeIfPresent(String.self, forKey: .candidateReason).map { $0.split(separator: ";").map(String.init) } ?? []
        conflicts = try c.decodeIfPresent([SourceConflict].self, forKey: .conflicts) ?? []
        missingProducts = try c.decodeIfPresent([String].self, forKey: .missingProducts) ?? []
        priceAmount = try c.decodeIfPresent(String.self, forKey: .priceAmount)
        priceCurrency = try c.decodeIfPresent(String.self, forKey: .priceCurrency)
        priceBasis = try c.decodeIfPresent(String.self, forKey: .priceBasis)
    }

    /// The CSV fields in column order.
    public var csvFields: [String] {
        [
            runID, userID, store ?? "", productID ?? "", String(dbTier), dbStatus, dbEndDate.map(ISO8601.string) ?? "",
            truthTier.map(String.init) ?? "", truthStatus ?? "", truthEndDate.map(ISO8601.string) ?? "", action,
            drift.joined(separator: ";"), applied ? "true" : "false", pushIntent.joined(separator: ";"), error ?? "",
            sources.joined(separator: ";"), candidateReason.joined(separator: ";"),
        ]
    }
}

/// One queued push intent as reported in `push_intents.csv` / `.json`.
public struct IntentRow: Sendable, Hashable, Codable {
    public static let columns = ["run_id", "user_id", "kind", "action", "dedupe_key", "product_id", "tier", "period_end"]
    public var runID: String
    public var userID: String
    public var kind: String
    public var action: String?
    public var dedupeKey: String
    public var productID: String?
    public var tier: Int
    public var periodEnd: String?

    enum CodingKeys: String, CodingKey {
        case runID = "run_id"
        case userID = "user_id"
        case kind, action
        case dedupeKey = "dedupe_key"
        case productID = "product_id"
        case tier
        case periodEnd = "period_end"
    }

    public init(runID: String, intent: PushIntent) {
        self.runID = runID
        self.userID = intent.userID
        self.kind = intent.kind.rawValue
        self.action = intent.kind.appAction
        self.dedupeKey = intent.dedupeKey
        self.productID = intent.productID
        self.tier = intent.tier
        self.periodEnd = intent.periodEnd.map(ISO8601.string)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(runID, forKey: .runID)
        try c.encode(userID, forKey: .userID)
        try c.encode(kind, forKey: .kind)
        try c.encode(action, forKey: .action)
        try c.encode(dedupeKey, forKey: .dedupeKey)
        try c.encode(productID, forKey: .productID)
        try c.encode(tier, forKey: .tier)
        try c.encode(periodEnd, forKey: .periodEnd)
    }

    public var csvFields: [String] {
        [runID, userID, kind, action ?? "", dedupeKey, productID ?? "", String(tier), periodEnd ?? ""]
    }
}

/// RFC 4180 CSV: fields with a comma, quote, CR or LF are quoted, quotes doubled; lines end in CRLF.
///
/// Decided on Unicode scalars, never on `Character`: CRLF is one `Character` in Swift, and a comma or quote followed
/// by a combining mark is another, so a `Character` test would leave them unquoted and let a value forge a row.
public enum CSV {
    /// One field, quoted when needed. A NUL (which no database id can hold, and `SourceText` already escapes at
    /// the decode edge) is written as the visible text `\u0000`, so no report file ever holds a NUL byte.
    public static func field(_ value: String) -> String {
        let value = SourceText.sanitized(value)
        guard value.unicodeScalars.contains(where: needsQuotes) else { return value }
        var out = String.UnicodeScalarView()
        out.append("\"")
        for scalar in value.unicodeScalars {
            if scalar == "\"" { out.append("\"") }
            out.append(scalar)
        }
        out.append("\"")
        return String(out)
    }

    /// The scalars that make a field quoted.
    static func needsQuotes(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar {
        case ",", "\"", "\r", "\n": true
        default: false
        }
    }

    public static func line(_ fields: [String]) -> String {
        fields.map(field).joined(separator: ",") + "\r\n"
    }

    /// A text cell a spreadsheet would not run as a formula: a value starting with `=`, `+`, `-`, `@`, TAB, CR or LF
    /// gets a leading `'` (OWASP's CSV-injection advice). Only for files people open in spreadsheets (`finance.csv`);
    /// machine-read files (`drift.csv`, `push_intents.csv`) keep every value exact.
    public static func spreadsheetText(_ value: String) -> String {
        switch value.unicodeScalars.first {
        case "=", "+", "-", "@", "\t", "\r", "\n": return "'" + value
        default: return value
        }
    }
}
