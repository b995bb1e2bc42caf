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
        return canonical(String(decoding: buffer, as: UTF8.self))
    }

    /// `text` with its metric families in name order and each family's samples in text order. The registry emits
    /// them in hash order, which differs from one process to the next; a run's `metrics.prom` and its re-render by
    /// `report RUN_ID` are the same bytes (docs/CONTRACT.md, "Reports").
    static func canonical(_ text: String) -> String {
        var families: [(name: Substring, comments: [Substring], samples: [Substring])] = []
        for line in text.split(separator: "\n") {
            if line.hasPrefix("#") {
                let name = line.split(separator: " ", maxSplits: 3).dropFirst(2).first ?? ""
                if let last = families.last, last.name == name, last.samples.isEmpty {
                    families[families.count - 1].comments.append(line)
                } else {
                    families.append((name, [line], []))
                }
            } else {
                if families.isEmpty { families.append(("", [], [])) }
                families[families.count - 1].samples.append(line)
            }
        }
        return families.sorted { $0.name < $1.name }.map { ($0.comments + $0.samples.sorted()).joined(separator: "\n") + "\n" }
            .joined()
    }

    /// `I/N` → `I_N` (the Pushgateway grouping key value; `/` cannot appear in a URL path segment).
    public static func shardLabel(_ shard: String) -> String { shard.replacingOccurrences(of: "/", with: "_") }

    /// Whether a run with this summary counts as a success for `subrecon_last_success_timestamp_seconds`:
    /// it completed (exit 0 or 1) and was not a dry run.
    public static func isSuccess(_ s: RunSummary) -> Bool { !s.dryRun && (s.exitCode == 0 || s.exitCode == 1) }
}
