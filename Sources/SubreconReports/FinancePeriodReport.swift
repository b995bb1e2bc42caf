import Foundation
import SubreconCore

/// The finance figures of a period (docs/CONTRACT.md, "subrecon finance"): flows counted once each, stocks as of each
/// shard's last completed night, the gaps, and the nightly series the HTML charts. Every figure is the sum of the
/// details rows of its key (`FinanceDetail`): the tally adds both from the same rows.
public struct FinancePeriodReport: Sendable, Encodable {
    public var from: Date
    public var to: Date
    /// The runs whose changes were counted, by id.
    public var runsCounted: [String] = []
    /// The runs in the period that were not counted, with why (`dry_run`, `failed`, `running`, `valve_tripped`).
    public var runsNotCounted: [FinanceRunNote] = []
    public var flows: [FinanceLine] = []
    public var stocks: [FinanceLine] = []
    public var gaps: [FinanceGap] = []
    public var nights: [FinanceNight] = []

    public init(from: Date, to: Date) {
        self.from = from
        self.to = to
    }

    enum CodingKeys: String, CodingKey {
        case from, to
        case runsCounted = "runs_counted"
        case runsNotCounted = "runs_not_counted"
        case flows, stocks, gaps, nights
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(ISO8601.string(from), forKey: .from)
        try c.encode(ISO8601.string(to), forKey: .to)
        try c.encode(runsCounted, forKey: .runsCounted)
        try c.encode(runsNotCounted, forKey: .runsNotCounted)
        try c.encode(flows, forKey: .flows)
        try c.encode(stocks, forKey: .stocks)
        try c.encode(gaps, forKey: .gaps)
        try c.encode(nights, forKey: .nights)
    }

    /// Whether every night of every shard in the period completed.
    public var isComplete: Bool { gaps.isEmpty }
}

/// A run of the period that was not counted, and why.
public struct FinanceRunNote: Sendable, Codable, Hashable {
    public var runID: String
    public var reason: String
    public init(runID: String, reason: String) {
        self.runID = runID
        self.reason = reason
    }
    enum CodingKeys: String, CodingKey {
        case runID = "run_id"
        case reason
    }
}

/// One figure line: a flow over the period, or a stock of one shard as of its last completed night.
public struct FinanceLine: Sendable, Encodable, Hashable {
    public struct Key: Sendable, Codable, Hashable, Comparable {
        public var figure: String
        public var store: String
        /// ISO 4217, or `unknown` when no source stated one.
        public var currency: String
        /// `paid`, `renewal`, `family_shared`, `trial` or `unknown`.
        public var basis: String
        /// Stocks only: the shard (`I/N`) and its night (the day, UTC).
        public var shard: String?
        public var night: String?

        public init(figure: String, store: String, currency: String, basis: String, shard: String? = nil, night: String? = nil) {
            self.figure = figure
            self.store = store
            self.currency = currency
            self.basis = basis
            self.shard = shard
            self.night = night
        }

        public static func < (a: Key, b: Key) -> Bool {
            let fa = FinanceDetail.figureOrder.firstIndex(of: a.figure) ?? Int.max
            let fb = FinanceDetail.figureOrder.firstIndex(of: b.figure) ?? Int.max
            return (fa, a.store, a.currency, a.basis, a.shard ?? "", a.night ?? "") < (
                fb, b.store, b.currency, b.basis, b.shard ?? "", b.night ?? ""
            )
        }

        enum CodingKeys: String, CodingKey {
            case figure, store, currency
            case basis = "price_basis"
            case shard, night
        }
    }

    public var key: Key
    public var count = 0
    /// The sum of the known amounts, in `key.currency`.
    public var value: Decimal = 0
    public var unknownPrice = 0

    public init(key: Key) { self.key = key }

    enum CodingKeys: String, CodingKey {
        case key, count, value
        case unknownPrice = "unknown_price"
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(key, forKey: .key)
        try c.encode(count, forKey: .count)
        try c.encode(FinanceCSV.decimalString(value), forKey: .value)
        try c.encode(unknownPrice, forKey: .unknownPrice)
    }
}

/// A night of a shard inside the period that did not complete: `missing` (no run), `failed`, `unfinished` (running or
/// valve tripped), `dry_run_only`, or `not_yet` (the night has not ended).
public struct FinanceGap: Sendable, Codable, Hashable, Comparable {
    /// The night's day, UTC (`2026-11-14`).
    public var night: String
    public var shard: String
    public var kind: String
    /// The runs of that shard and night, if any.
    public var runIDs: [String]

    public init(night: String, shard: String, kind: String, runIDs: [String]) {
        self.night = night
        self.shard = shard
        self.kind = kind
        self.runIDs = runIDs
    }

    public static func < (a: FinanceGap, b: FinanceGap) -> Bool { (a.night, a.shard) < (b.night, b.shard) }

    enum CodingKeys: String, CodingKey {
        case night, shard, kind
        case runIDs = "run_ids"
    }
}

/// One night of the series the HTML charts: per currency, the refunds and restored values dated that night and the
/// revenue at risk of that night's completed runs; the drift kinds of the night's applied changes.
public struct FinanceNight: Sendable, Encodable, Hashable {
    public var night: String
    public var refunds: [String: Decimal] = [:]
    public var restored: [String: Decimal] = [:]
    public var atRisk: [String: Decimal] = [:]
    public var drift: [String: Int] = [:]

    public init(night: String) { self.night = night }

    enum CodingKeys: String, CodingKey {
        case night, refunds, restored
        case atRisk = "at_risk"
        case drift
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(night, forKey: .night)
        try c.encode(refunds.mapValues(FinanceCSV.decimalString), forKey: .refunds)
        try c.encode(restored.mapValues(FinanceCSV.decimalString), forKey: .restored)
        try c.encode(atRisk.mapValues(FinanceCSV.decimalString), forKey: .atRisk)
        try c.encode(drift, forKey: .drift)
    }
}
