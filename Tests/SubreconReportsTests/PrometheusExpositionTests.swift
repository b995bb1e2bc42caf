import CoreMetrics
import Foundation
import Prometheus
import SubreconCore
import SubreconReports
import SubreconTestKit
import Testing

@Suite("Prometheus exposition")
struct PrometheusExpositionTests {
    @Test("the exposition parses as Prometheus text and holds the run's numbers")
    func parses() throws {
        let summary = ReportFixtures.summary()
        let lastSuccess = ISO8601.date("2025-06-01T03:15:42Z")!
        let text = PrometheusExposition.text(summary, lastSuccess: lastSuccess)
        let parsed = try PrometheusTextParser(text)
        #expect(parsed.types["subrecon_run_users"] == "counter")
        #expect(parsed.types["subrecon_run_requests"] == "counter")
        #expect(parsed.types["subrecon_run_exit_code"] == "gauge")
        #expect(parsed.types["subrecon_run_revenue_at_risk"] == "gauge")
        #expect(parsed.samples.allSatisfy { $0.labels["shard"] == "0_1" })
        #expect(parsed.value("subrecon_run_users", ["action": "extend"]) == 3)
        #expect(parsed.value("subrecon_run_users", ["action": "none"]) == 0)
        #expect(parsed.value("subrecon_run_users_drift", ["drift": "billing_issue_entered"]) == 2)
        #expect(parsed.value("subrecon_run_requests", ["source": "revenuecat"]) == 9)
        #expect(parsed.value("subrecon_run_rate_limited", ["source": "revenuecat"]) == 2)
        #expect(parsed.value("subrecon_run_source_errors", ["source": "revenuecat"]) == 1)
        #expect(parsed.value("subrecon_run_candidates") == 7)
        #expect(parsed.value("subrecon_run_applied") == 4)
        #expect(parsed.value("subrecon_run_user_errors") == 1)
        #expect(parsed.value("subrecon_run_valve_tripped") == 0)
        #expect(parsed.value("subrecon_run_dry_run") == 0)
        #expect(parsed.value("subrecon_run_finished_timestamp_seconds") == lastSuccess.timeIntervalSince1970)
        #expect(parsed.value("subrecon_run_duration_seconds") == 42.5)
        #expect(parsed.value("subrecon_run_exit_code") == 1)
        #expect(parsed.value("subrecon_last_success_timestamp_seconds") == lastSuccess.timeIntervalSince1970)
        #expect(parsed.value("subrecon_run_revenue_at_risk", ["store": "app_store", "currency": "USD"]) == 19.99)
        #expect(parsed.value("subrecon_run_revenue_at_risk", ["currency": "unknown"]) == nil)
        // A label value with a quote, a backslash and a line feed survives the round trip.
        #expect(parsed.value("subrecon_run_requests", ["source": "weird \"source\"\\x\nline"]) == 0)
        #expect(text.contains(#"source="weird \"source\"\\x\nline""#))
    }

    @Test("without a known success the last-success gauge is left out rather than invented")
    func noLastSuccess() throws {
        var summary = ReportFixtures.summary()
        summary.exitCode = 3
        let parsed = try PrometheusTextParser(PrometheusExposition.text(summary, lastSuccess: nil))
        #expect(parsed.value("subrecon_last_success_timestamp_seconds") == nil)
        #expect(!PrometheusExposition.isSuccess(summary))
    }

    @Test("each exposition comes from a fresh registry, so runs in one process do not add up")
    func freshRegistryPerRun() throws {
        let summary = ReportFixtures.summary()
        let first = try PrometheusTextParser(PrometheusExposition.text(summary, lastSuccess: nil))
        let second = try PrometheusTextParser(PrometheusExposition.text(summary, lastSuccess: nil))
        #expect(first.value("subrecon_run_users", ["action": "extend"]) == 3)
        #expect(second.value("subrecon_run_users", ["action": "extend"]) == 3)
        #expect(Set(first.samples) == Set(second.samples))
    }

    @Test("RunMetrics records into the factory it is given, not the global metrics system")
    func injectedFactory() throws {
        let registry = PrometheusCollectorRegistry()
        RunMetrics(factory: PrometheusMetricsFactory(registry: registry)).record(ReportFixtures.summary(), lastSuccess: nil)
        let parsed = try PrometheusTextParser(registry.emitToString())
        #expect(parsed.value("subrecon_run_requests", ["source": "revenuecat", "shard": "0_1"]) == 9)
        // Recording a second run into the same registry adds the counters up: hence one registry per run.
        RunMetrics(factory: PrometheusMetricsFactory(registry: registry)).record(ReportFixtures.summary(), lastSuccess: nil)
        #expect(try PrometheusTextParser(registry.emitToString()).value("subrecon_run_requests", ["source": "revenuecat"]) == 18)
    }

    @Test("the parser rejects what Prometheus would reject")
    func parserIsStrict() {
        #expect(throws: PrometheusTextParser.Failure.self) { try PrometheusTextParser("x 1\n") }
        #expect(throws: PrometheusTextParser.Failure.self) { try PrometheusTextParser("# TYPE x gauge\nx{a=\"b\\q\"} 1\n") }
        #expect(throws: PrometheusTextParser.Failure.self) { try PrometheusTextParser("# TYPE 1x gauge\n1x 1\n") }
    }
}
