import Foundation
import SubreconCore

/// The run's numbers in the Prometheus text exposition format (version 0.0.4), for node_exporter's textfile
/// collector (`--metrics-file`) and the Pushgateway (`--pushgateway-url`).
///
/// Written directly from the run summary, with no global metrics state: each run is its own process, so every
/// value is a gauge describing the latest run of a shard (counters would reset with every process anyway).
/// Every sample carries `shard="I_N"`, the same value as the Pushgateway grouping key.
public enum PrometheusExposition {
    /// The exposition of `summary`. `lastSuccess` is when the latest successful run of this shard finished
    /// (this one if it succeeded), nil when none is known.
    public static func text(_ s: RunSummary, lastSuccess: Date?) -> String {
        let shard = shardLabel(s.shard)
        var families: [Family] = []
        func family(_ name: String, _ help: String, _ samples: [([(String, String)], Double)]) {
            families.append(Family(name: name, help: help, samples: samples.map { ([("shard", shard)] + $0.0, $0.1) }))
        }
        family(
            "subrecon_run_users", "Users processed by the latest run, by action.",
            Action.allCases.map { ([("action", $0.rawValue)], Double(s.actions[$0.rawValue] ?? 0)) })
        family(
            "subrecon_run_users_drift", "Users processed by the latest run, by drift kind (a user may have several).",
            Drift.allCases.map { ([("drift", $0.rawValue)], Double(s.drift[$0.rawValue] ?? 0)) })
        family("subrecon_run_candidates", "Candidates the latest run checked.", [([], Double(s.candidates))])
        family("subrecon_run_applied", "Rows the latest run corrected.", [([], Double(s.applied))])
        family("subrecon_run_user_errors", "Users left untouched because a source failed or a signature was bad.", [([], Double(s.errors))])
        let sources = s.requests.keys.sorted()
        family(
            "subrecon_run_source_errors", "Requests to a source that failed after retries, by source.",
            sources.map { ([("source", $0)], Double(s.requests[$0]?.failures ?? 0)) })
        family(
            "subrecon_run_requests", "HTTP requests made to a source, by source.",
            sources.map { ([("source", $0)], Double(s.requests[$0]?.requests ?? 0)) })
        family(
            "subrecon_run_rate_limited", "HTTP 429 answers from a source, by source.",
            sources.map { ([("source", $0)], Double(s.requests[$0]?.rateLimited ?? 0)) })
        family("subrecon_run_intents_queued", "Push intents the latest run queued.", [([], Double(s.intentsQueued))])
        family("subrecon_run_duration_seconds", "Wall-clock duration of the latest run.", [([], s.timings.totalSeconds)])
        family("subrecon_run_exit_code", "Exit code of the latest run (SPEC 5.8).", [([], Double(s.exitCode))])
        family("subrecon_run_valve_tripped", "1 when the latest run's safety valve tripped (nothing applied).", [([], s.valve?.tripped == true ? 1 : 0)])
        family("subrecon_run_dry_run", "1 when the latest run was a dry run.", [([], s.dryRun ? 1 : 0)])
        if let finished = s.finishedAt.flatMap(ISO8601.date) {
            family("subrecon_run_finished_timestamp_seconds", "When the latest run finished (Unix time).", [([], finished.timeIntervalSince1970)])
        }
        if let lastSuccess {
            family(
                "subrecon_last_success_timestamp_seconds", "When the latest successful run of this shard finished (Unix time).",
                [([], lastSuccess.timeIntervalSince1970)])
        }
        let buckets = s.finance.buckets.values.sorted { ($0.store, $0.currency) < ($1.store, $1.currency) }
        family(
            "subrecon_run_revenue_at_risk", "Billing-issue revenue at risk found by the latest run, from source prices.",
            buckets.filter { $0.currency != "unknown" }.map {
                ([("store", $0.store), ("currency", $0.currency)], Double(FinanceCSV.decimalString($0.billingIssueAtRisk.value)) ?? 0)
            })
        return families.filter { !$0.samples.isEmpty }.map(\.text).joined()
    }

    /// `I/N` → `I_N` (the Pushgateway grouping key value; `/` cannot appear in a URL path segment).
    public static func shardLabel(_ shard: String) -> String { shard.replacingOccurrences(of: "/", with: "_") }

    /// Whether a run with this summary counts as a success for `subrecon_last_success_timestamp_seconds`:
    /// it completed (exit 0 or 1) and was not a dry run.
    public static func isSuccess(_ s: RunSummary) -> Bool { !s.dryRun && (s.exitCode == 0 || s.exitCode == 1) }

    struct Family {
        var name: String
        var help: String
        var samples: [([(String, String)], Double)]

        var text: String {
            var out = "# HELP \(name) \(escapeHelp(help))\n# TYPE \(name) gauge\n"
            for (labels, value) in samples {
                let rendered = labels.map { "\($0.0)=\"\(escapeLabel($0.1))\"" }.joined(separator: ",")
                out += "\(name)\(rendered.isEmpty ? "" : "{\(rendered)}") \(number(value))\n"
            }
            return out
        }
    }

    /// Label values: backslash, double quote and line feed are escaped.
    public static func escapeLabel(_ value: String) -> String {
        value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "\n", with: "\\n")
    }

    /// HELP text: backslash and line feed are escaped.
    static func escapeHelp(_ value: String) -> String {
        value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\n", with: "\\n")
    }

    static func number(_ value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value.isInfinite { return value > 0 ? "+Inf" : "-Inf" }
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return String(value)
    }
}
