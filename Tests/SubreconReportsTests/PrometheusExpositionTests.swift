import Foundation
import SubreconCore
import SubreconReports
import Testing

@Suite("Prometheus exposition")
struct PrometheusExpositionTests {
    @Test("the exposition parses as Prometheus text and holds the run's numbers")
    func parses() throws {
        let summary = ReportFixtures.summary()
        let lastSuccess = ISO8601.date("2025-06-01T03:15:42Z")!
        let text = PrometheusExposition.text(summary, lastSuccess: lastSuccess)
        let parsed = try PrometheusTextParser(text)
        #expect(parsed.types.values.allSatisfy { $0 == "gauge" })
        #expect(parsed.samples.allSatisfy { $0.labels["shard"] == "0_1" })
        #expect(parsed.value("subrecon_run_users", ["action": "extend"]) == 3)
        #expect(parsed.value("subrecon_run_users", ["action": "none"]) == 0)
        #expect(parsed.value("subrecon_run_users_drift", ["drift": "billing_issue_entered"]) == 2)
        #expect(parsed.value("subrecon_run_requests", ["source": "revenuecat"]) == 9)
        #expect(parsed.value("subrecon_run_rate_limited", ["source": "revenuecat"]) == 2)
        #expect(parsed.value("subrecon_run_source_errors", ["source": "revenuecat"]) == 1)
        #expect(parsed.value("subrecon_run_duration_seconds") == 42.5)
        #expect(parsed.value("subrecon_run_exit_code") == 1)
        #expect(parsed.value("subrecon_last_success_timestamp_seconds") == lastSuccess.timeIntervalSince1970)
        #expect(parsed.value("subrecon_run_revenue_at_risk", ["store": "app_store", "currency": "USD"]) == 19.99)
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

    @Test("the parser rejects what Prometheus would reject")
    func parserIsStrict() {
        #expect(throws: PrometheusTextParser.Failure.self) { try PrometheusTextParser("x 1\n") }
        #expect(throws: PrometheusTextParser.Failure.self) { try PrometheusTextParser("# TYPE x gauge\nx{a=\"b\\q\"} 1\n") }
        #expect(throws: PrometheusTextParser.Failure.self) { try PrometheusTextParser("# TYPE 1x gauge\n1x 1\n") }
    }
}
