import Foundation
import Logging
import SubreconCommand
import SubreconPorts
import Testing

@Suite("Metrics publishing failures")
struct MetricsPublisherTests {
    @Test("a metrics file that cannot be written and an unreachable Pushgateway are reported, not thrown")
    func failuresAreSoft() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("subrecon-metrics-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try Data("# TYPE subrecon_run_exit_code gauge\nsubrecon_run_exit_code{shard=\"0_1\"} 0.0\n".utf8)
            .write(to: folder.appendingPathComponent("metrics.prom"))
        let ok = await MetricsPublisher.publish(
            runFolder: folder, shard: .all, metricsFile: folder.appendingPathComponent("missing/dir/subrecon.prom").path,
            pushgatewayURL: "http://user:secret@127.0.0.1:1", logger: Logger(label: "subrecon.metrics.tests"))
        #expect(!ok)
        #expect(MetricsPublisher.redacted("http://user:secret@127.0.0.1:1") == "http://127.0.0.1:1")
    }
}
