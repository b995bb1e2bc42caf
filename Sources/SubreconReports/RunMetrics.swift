import CoreMetrics
import Foundation
import SubreconCore

/// Records one run's numbers through swift-metrics, into whatever `MetricsFactory` it is given.
///
/// The factory is injected, never the global `MetricsSystem`: the job builds a fresh
/// `PrometheusMetricsFactory` over a fresh registry per run (see ``PrometheusExposition``), so several runs in
/// one process, and tests, never share state. Every metric carries the dimension `shard="I_N"`, the same value
/// as the Pushgateway grouping key.
///
/// Counts made during the run (users by action and drift kind, errors, requests and 429s by source, candidates,
/// corrections, queued intents) are `Counter`s; states of the run (duration, exit code, timestamps, valve,
/// revenue at risk) are `Gauge`s. Each run is its own process, so a counter describes that run alone.
public struct RunMetrics: Sendable {
    /// Where the metrics go.
    public let factory: any MetricsFactory

    /// Metrics recorded into `factory`.
    public init(factory: any MetricsFactory) {
        self.factory = factory
    }

    /// Records `summary`. `lastSuccess` is when the latest successful run of this shard finished (this one if
    /// it succeeded); nil leaves `subrecon_last_success_timestamp_seconds` out rather than inventing it.
    public func record(_ s: RunSummary, lastSuccess: Date?) {
        let shard = [("shard", PrometheusExposition.shardLabel(s.shard))]
        func count(_ label: String, _ value: Int, _ dimensions: [(String, String)] = []) {
            Counter(label: label, dimensions: shard + dimensions, factory: factory).increment(by: Int64(max(0, value)))
        }
        func gauge(_ label: String, _ value: Double, _ dimensions: [(String, String)] = []) {
            Gauge(label: label, dimensions: shard + dimensions, factory: factory).record(value)
        }
        for action in Action.allCases {
            count("subrecon_run_users", s.actions[action.rawValue] ?? 0, [("action", action.rawValue)])
        }
        for drift in Drift.allCases {
            count("subrecon_run_users_drift", s.drift[drift.rawValue] ?? 0, [("drift", drift.rawValue)])
        }
        count("subrecon_run_candidates", s.candidates)
        count("subrecon_run_applied", s.applied)
        count("subrecon_run_user_errors", s.errors)
        for source in s.requests.keys.sorted() {
            let stats = s.requests[source] ?? RunSummary.SourceRequests()
            count("subrecon_run_source_errors", stats.failures, [("source", source)])
            count("subrecon_run_requests", stats.requests, [("source", source)])
            count("subrecon_run_rate_limited", stats.rateLimited, [("source", source)])
        }
        count("subrecon_run_intents_queued", s.intentsQueued)
        gauge("subrecon_run_duration_seconds", s.timings.totalSeconds)
        gauge("subrecon_run_exit_code", Double(s.exitCode))
        gauge("subrecon_run_valve_tripped", s.valve?.tripped == true ? 1 : 0)
        gauge("subrecon_run_dry_run", s.dryRun ? 1 : 0)
        if let finished = s.finishedAt.flatMap(ISO8601.date) {
            gauge("subrecon_run_finished_timestamp_seconds", finished.timeIntervalSince1970)
        }
        if let lastSuccess {
            gauge("subrecon_last_success_timestamp_seconds", lastSuccess.timeIntervalSince1970)
        }
        let buckets = s.finance.revenueBuckets.filter { $0.currency != "unknown" }
        for bucket in buckets {
            gauge(
                "subrecon_run_revenue_at_risk", Double(FinanceCSV.decimalString(bucket.billingIssueAtRisk.value)) ?? 0,
                [("store", bucket.store), ("currency", bucket.currency)])
        }
    }
}
