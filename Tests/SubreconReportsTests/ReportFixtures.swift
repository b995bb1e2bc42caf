import Foundation
import SubreconCore

@testable import SubreconReports

/// A run summary with known figures: two stores, two currencies, an unknown price, drift on two products.
enum ReportFixtures {
    static func summary() -> RunSummary {
        var s = RunSummary(
            runID: "20250601T031500Z-ab12", mode: "nightly", asOf: ISO8601.date("2025-06-01T03:00:00Z")!, shard: "0/1",
            dryRun: false, startedAt: ISO8601.date("2025-06-01T03:15:00Z")!)
        s.status = .completedWithErrors
        s.exitCode = 1
        s.finishedAt = "2025-06-01T03:15:42Z"
        s.timings.totalSeconds = 42.5
        s.candidates = 7
        s.applied = 4
        s.errors = 1
        s.actions["downgrade"] = 2
        s.actions["restore"] = 1
        s.actions["extend"] = 3
        s.actions["skipped"] = 1
        s.drift["missed_refund"] = 1
        s.drift["billing_issue_entered"] = 2
        s.drift["missed_renewal"] = 3
        s.drift["fetch_error"] = 1
        s.drift["in_sync"] = 0
        var rc = RunSummary.SourceRequests()
        rc.requests = 9
        rc.rateLimited = 2
        rc.failures = 1
        s.requests["revenuecat"] = rc
        s.requests["weird \"source\"\\x\nline"] = RunSummary.SourceRequests()
        s.valve = RunSummary.Valve(threshold: 0.5, heldTier: 6, wouldLoseTier: 2)
        var usd = FinanceFigures.Bucket(store: "app_store", currency: "USD")
        usd.refunds.count = 1
        usd.refunds.value = Decimal(string: "9.99")!
        usd.billingIssueAtRisk.count = 1
        usd.billingIssueAtRisk.value = Decimal(string: "19.99")!
        var eur = FinanceFigures.Bucket(store: "play_store", currency: "EUR")
        eur.restored.count = 1
        eur.restored.value = Decimal(string: "49.99")!
        var unknown = FinanceFigures.Bucket(store: "app_store", currency: "unknown")
        unknown.billingIssueAtRisk.count = 1
        unknown.billingIssueAtRisk.unknownPrice = 1
        s.finance.buckets = ["app_store|USD": usd, "play_store|EUR": eur, "app_store|unknown": unknown]
        s.finance.driftByProduct = [
            "premium_monthly": ["missed_renewal": 3, "billing_issue_entered": 2],
            "pro_monthly": ["missed_refund": 1],
        ]
        return s
    }
}
