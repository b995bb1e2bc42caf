import Foundation
import SubreconCore
import SubreconPorts

/// A month of nights for `subrecon finance` (docs/CONTRACT.md, "subrecon finance"), the same in memory and in PostgreSQL:
/// November 2026, two shards, nightly runs at 03:00 UTC, with a resumed night, a rerun, dry runs, a failed night, a
/// missing and an unfinished one, a refund seen twice (a feed and a lookup), a user at risk for ten nights, two
/// currencies, a family-shared purchase and an unknown price. `expectedFlows`, `expectedStocks` and `expectedGaps` are
/// computed by hand from the comments below.
public enum FinanceMonthFixture {
    public struct Entry: Sendable {
        public var runID: String
        public var seq: Int64
        public var verdict: Verdict
        public var outcome: LedgerOutcome?
    }

    public struct Refund: Sendable {
        public var runID: String
        public var userID: String
        public var refund: SeenRefund
    }

    public static let from = instant("2026-11-01T00:00:00Z")
    public static let to = instant("2026-12-01T00:00:00Z")
    /// After the month: every night has ended.
    public static let now = instant("2026-12-01T06:00:00Z")

    public static func instant(_ text: String) -> Date { ISO8601.date(text)! }
    public static func night(_ day: Int) -> Date { instant(String(format: "2026-11-%02dT03:00:00Z", day)) }
    static func id(_ day: Int, _ shard: Int) -> String { String(format: "n%02d-s%d", day, shard) }

    /// Every run: one completed nightly run per night and shard, except the gaps; the rerun, the dry runs, the failed
    /// and the unfinished run beside them.
    public static var runs: [FinanceRun] {
        var runs: [FinanceRun] = []
        func add(_ id: String, _ day: Int, _ shard: Int, status: RunStatus = .completed, dryRun: Bool = false, minutes: Double = 0) {
            let asOf = night(day).addingTimeInterval(minutes * 60)
            runs.append(
                FinanceRun(
                    id: id, mode: .nightly, asOf: asOf, shard: ShardSpec(index: shard, count: 2), dryRun: dryRun, status: status,
                    startedAt: asOf, finishedAt: status == .running ? nil : asOf.addingTimeInterval(600)))
        }
        for day in 1...30 {
            for shard in 0..<2 {
                switch (day, shard) {
                case (5, 1): add("n05-s1-failed", day, shard, status: .failed)  // failed, never resumed: a gap
                case (12, 1): add("n12-s1-dry", day, shard, dryRun: true)  // only a dry run: a gap
                case (20, 0): break  // no run at all: a gap
                case (22, 1): add("n22-s1-running", day, shard, status: .running)  // never finished: a gap
                default: add(id(day, shard), day, shard)
                }
            }
        }
        add("n10-s0-rerun", 10, 0, minutes: 90)  // the same night again: finds the row already fixed
        add("n15-s0-dry", 15, 0, dryRun: true, minutes: 30)  // a dry run beside the night: never counted
        return runs.sorted { ($0.asOf, $0.id) < ($1.asOf, $1.id) }
    }

    static func verdict(
        _ user: String, _ action: Action, drift: [Drift], before: (Int, String), truth: (Int, SubscriptionStatus), store: StoreKind,
        financePrice: FinancePrice? = nil, price: Money? = nil, graceEndsAt: Date? = nil
    ) -> Verdict {
        let row = UserRow(id: user, currentTier: before.0, status: before.1, originalTransactionID: "otx-\(user)")
        var v = Verdict(
            row: row,
            truth: Entitlement(
                tier: truth.0, status: truth.1, endDate: nil, graceEndsAt: graceEndsAt, source: nil, productID: "premium_monthly",
                originalTransactionID: "otx-\(user)", autoRenew: nil),
            action: action, drift: drift, store: store, price: price)
        v.financePrice = financePrice
        return v
    }

    static func usd(_ amount: String, _ basis: PriceBasis) -> FinancePrice {
        FinancePrice(amount: Decimal(string: amount)!, currency: "USD", basis: basis)
    }
    static func eur(_ amount: String, _ basis: PriceBasis) -> FinancePrice {
        FinancePrice(amount: Decimal(string: amount)!, currency: "EUR", basis: basis)
    }
}
