import Foundation
import Prometheus
import SubreconCore

/// The run's numbers in the Prometheus text exposition format (version 0.0.4), for node_exporter's textfile
/// collector (`--metrics-file`) and the Pushgateway (`--pushgateway-url`).
///
/// The numbers are recorded through swift-metrics (``RunMetrics``) into a `PrometheusMetricsFactory` over a
/// fresh `PrometheusCollectorRegistry`, and the text is that registry's `emit(into:)` output. Nothing touches
/// the global `MetricsSystem`.
public enum PrometheusExposition {
    /// The exposition of `summary`. `lastSuccess` is when the latest successful run of this shard finished
    /// (this one if it succeeded), nil when none is known.
    public static func text(_ s: RunSummary, lastSuccess: Date?) -> String {
        let registry = PrometheusCollectorRegistry()
        RunMetrics(factory: PrometheusMetricsFactory(registry: registry)).record(s, lastSuccess: lastSuccess)
        var buffer: [UInt8] = []
        registry.emit(into: &buffer)
        return String(decoding: buffer, as: UTF8.self)
    }

    /// `I/N` → `I_N` (the Pushgateway grouping key value; `/` cannot appear in a URL path segment).
    public static func shardLabel(_ shard: String) -> String { shard.replacingOccurrences(of: "/", with: "_") }

    /// Whether a run with this summary counts as a success for `subrecon_last_success_timestamp_seconds`:
    /// it completed (exit 0 or 1) and was not a dry run.
    public static func isSuccess(_ s: RunSummary) -> Bool { !s.dryRun && (s.exitCode == 0 || s.exitCode == 1) }
}
