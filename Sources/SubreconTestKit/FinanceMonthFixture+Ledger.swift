import Foundation
import SubreconCore
import SubreconPorts

extension FinanceMonthFixture {
    /// The ledgers: what each run decided and what applying it did.
    public static var entries: [Entry] {
        var out: [Entry] = []
        func add(_ run: String, _ v: Verdict, _ outcome: LedgerOutcome?) {
            out.append(Entry(runID: run, seq: Int64(out.filter { $0.runID == run }.count), verdict: v, outcome: outcome))
        }
        let paid = PriceBasis.paid
        let renewal = PriceBasis.renewal
        // Flows counted.
        add(
            "n03-s0",
            verdict(
                "u-refund", .downgrade, drift: [.missedRefund], before: (1, "active"), truth: (0, .refunded), store: .playStore,
                financePrice: usd("9.99", paid)), .applied)
        add(
            "n04-s1",
            verdict(
                "u-expired", .downgrade, drift: [.missedExpiration], before: (1, "active"), truth: (0, .expired), store: .stripe,
                price: Money(amount: Decimal(string: "9.99")!, currency: "usd")), .applied)
        add(
            "n07-s1",
            verdict(
                "u-restored-usd", .restore, drift: [.missedRenewal], before: (0, "expired"), truth: (1, .active), store: .appStore,
                financePrice: usd("9.99", renewal)), .applied)
        // The resumed night: verdicts from before the stop and after it, one per user, applied once.
        add(
            "n08-s0", verdict("u-resumed-a", .none, drift: [.inSync], before: (1, "active"), truth: (1, .active), store: .appStore),
            .unchanged)
        add(
            "n08-s0",
            verdict(
                "u-resumed-b", .extend, drift: [.missedRenewal], before: (1, "active"), truth: (1, .active), store: .appStore,
                price: Money(amount: Decimal(string: "4.99")!, currency: "EUR")), .applied)
        add(
            "n09-s1",
            verdict(
                "u-family", .restore, drift: [.missedRenewal], before: (0, "expired"), truth: (1, .active), store: .appStore,
                financePrice: usd("0", .familyShared)), .applied)
        // The rerun: the first run restored the user; the rerun finds the row fixed.
        add(
            "n10-s0",
            verdict(
                "u-rerun", .restore, drift: [.missedRenewal], before: (0, "expired"), truth: (1, .active), store: .appStore,
                financePrice: usd("9.99", renewal)), .applied)
        add(
            "n10-s0-rerun", verdict("u-rerun", .none, drift: [.inSync], before: (1, "active"), truth: (1, .active), store: .appStore),
            .unchanged)
        add(
            "n11-s0",
            verdict(
                "u-unknown", .restore, drift: [.missedRenewal], before: (0, "expired"), truth: (1, .active), store: .playStore,
                financePrice: .unknown), .applied)
        add(
            "n15-s0",
            verdict(
                "u-restored-eur", .restore, drift: [.missedRenewal], before: (0, "expired"), truth: (1, .active), store: .appStore,
                financePrice: eur("4.49", renewal)), .applied)
        add(
            "n16-s0",
            verdict("u-lapsed", .downgrade, drift: [.graceExpired], before: (1, "billing_issue"), truth: (0, .expired), store: .appStore),
            .applied)
        // Not counted: the failed night's applied change, a dry run's verdict, a change that lost to a webhook.
        add(
            "n05-s1-failed",
            verdict(
                "u-in-failed", .restore, drift: [.missedRenewal], before: (0, "expired"), truth: (1, .active), store: .appStore,
                financePrice: usd("9.99", renewal)), .applied)
        add(
            "n15-s0-dry",
            verdict(
                "u-in-dry", .restore, drift: [.missedRenewal], before: (0, "expired"), truth: (1, .active), store: .appStore,
                financePrice: usd("9.99", renewal)), nil)
        add(
            "n18-s1",
            verdict(
                "u-concurrent", .restore, drift: [.missedRenewal], before: (0, "expired"), truth: (1, .active), store: .appStore,
                financePrice: usd("9.99", renewal)), .concurrentUpdate)
        // Stocks: a user at risk on shard 1 for ten nights (21–30; night 22 unfinished), grace over on the 25th; a
        // user at risk in grace on shard 0's last night.
        for day in 21...30 {
            let run = day == 22 ? "n22-s1-running" : String(format: "n%02d-s1", day)
            add(
                run,
                verdict(
                    "u-at-risk", day == 21 ? .statusChange : .none, drift: day == 21 ? [.billingIssueEntered] : [.inSync],
                    before: (1, day == 21 ? "active" : "billing_issue"), truth: (1, .billingIssue), store: .appStore,
                    financePrice: usd("9.99", renewal), graceEndsAt: instant("2026-11-25T00:00:00Z")), day == 21 ? .applied : .unchanged)
        }
        add(
            "n30-s0",
            verdict(
                "u-grace", .statusChange, drift: [.billingIssueEntered], before: (1, "active"), truth: (1, .billingIssue), store: .appStore,
                financePrice: eur("4.49", renewal), graceEndsAt: instant("2026-12-05T00:00:00Z")), .applied)
        return out
    }

    /// `refunds_seen`: one refund seen by a feed on the 3rd and by a lookup on the 4th (kept once), one in EUR, one
    /// without an amount (a Google void), and two outside the period.
    public static var refunds: [Refund] {
        func r(_ run: String, _ user: String, _ store: String, _ txn: String, _ at: String, _ amount: String?, _ currency: String?)
            -> Refund
        {
            Refund(
                runID: run, userID: user,
                refund: SeenRefund(
                    store: store, transactionID: txn, refundedAt: instant(at), amount: amount.flatMap { Decimal(string: $0) },
                    currency: currency))
        }
        return [
            r("n03-s0", "u-refund", "play_store", "GPA.1", "2026-11-02T22:00:00Z", "9.99", "USD"),
            r("n04-s0", "u-refund", "play_store", "GPA.1", "2026-11-02T22:00:00Z", "9.99", "USD"),
            r("n06-s1", "u-eur", "app_store", "2000001", "2026-11-06T01:00:00Z", "4.99", "EUR"),
            r("n13-s0", "u-void", "play_store", "GPA.2", "2026-11-13T00:30:00Z", nil, nil),
            r("n01-s0", "u-old", "app_store", "2000000", "2026-10-31T23:59:59Z", "9.99", "USD"),
            r("n30-s1", "u-next", "app_store", "2000002", "2026-12-01T00:00:00Z", "9.99", "USD"),
        ]
    }

    /// The flows as `figure store currency basis count value unknown_price`, in report order.
    public static let expectedFlows = [
        "refunds app_store EUR paid 1 4.99 0",
        "refunds play_store USD paid 1 9.99 0",
        "refunds play_store unknown unknown 1 0 1",
        "restored app_store EUR renewal 1 4.49 0",
        "restored app_store USD family_shared 1 0 0",
        "restored app_store USD renewal 2 19.98 0",
        "restored play_store unknown unknown 1 0 1",
        "downgraded_refunded play_store USD paid 1 9.99 0",
        "downgraded_expired stripe USD paid 1 9.99 0",
        "downgraded_billing_retry_lapsed app_store unknown unknown 1 0 1",
        "extended_lapsed app_store EUR paid 1 4.99 0",
    ]

    /// The stocks as `figure store currency basis shard night count value unknown_price`.
    public static let expectedStocks = [
        "billing_issue_at_risk app_store EUR renewal 0/2 2026-11-30 1 4.49 0",
        "billing_issue_at_risk app_store USD renewal 1/2 2026-11-30 1 9.99 0",
        "in_grace app_store EUR renewal 0/2 2026-11-30 1 4.49 0",
    ]

    /// The gaps as `night shard kind`.
    public static let expectedGaps = [
        "2026-11-05 1/2 failed", "2026-11-12 1/2 dry_run_only", "2026-11-20 0/2 missing", "2026-11-22 1/2 unfinished",
    ]
}
