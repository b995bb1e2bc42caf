import Foundation
import PostgresNIO
import StoreSimulator
import SubreconApp
import SubreconCore
import SubreconDatabase
import SubreconJob
import SubreconPorts
import SubreconReports
import Testing

/// Text from a row or a source printed to a terminal never carries control characters (docs/CONTRACT.md,
/// "Commands"): `explain` and the run's summary escape them.
@Suite("Control characters never reach the terminal", .serialized, .enabled(if: Harness.isEnabled, Harness.skip), .timeLimit(.minutes(3)))
struct TerminalEscapingTests {
    /// A user id that clears the screen, retitles the window, rings the bell and opens a C1 CSI.
    static let hostileID = "esc-\u{1B}[2J\u{1B}]0;owned\u{7}-\u{9B}31m-\u{8}\u{7F}-\u{202E}rtl"

    /// The control scalars a terminal acts on: C0 but the line feed, DEL, C1, and the line/paragraph separators and
    /// bidirectional overrides.
    static func controls(in text: String) -> [Unicode.Scalar] {
        text.unicodeScalars.filter { scalar in
            if scalar == "\n" { return false }
            switch scalar.value {
            case 0..<0x20, 0x7F...0x9F, 0x2028, 0x2029, 0x202A...0x202E, 0x2066...0x2069: return true
            default: return false
            }
        }
    }

    @Test("explain (text) escapes a user id's and a row's control characters; --json stays exact JSON")
    func explainEscapes() async throws {
        try await Harness.with { h in
            var row = h.row(Self.hostileID, tier: 1, "active", end: -3, txn: "txn-\u{1B}[31m")
            row.source = "apple_iap\u{1B}[5m"
            try await h.seed(row, Harness.subscription(expires: 27))
            let run = try await BinaryRun.run(
                ["explain", Self.hostileID, "--as-of", ISO8601.string(Harness.asOf)], environment: h.env.values,
                directory: h.reportDirectory)
            #expect(run.status == 0, "\(run.operatorLines)")
            let text = run.stdoutText
            #expect(text.contains("[2J"), "the id is still shown, escaped: \(text)")
            #expect(Self.controls(in: text).isEmpty, "raw controls on the terminal: \(Self.controls(in: text).map { $0.value })")

            let json = try await BinaryRun.run(
                ["explain", Self.hostileID, "--as-of", ISO8601.string(Harness.asOf), "--json"], environment: h.env.values,
                directory: h.reportDirectory)
            let document = try JSONSerialization.jsonObject(with: json.stdout) as? [String: Any]
            let shown = (document?["row"] as? [String: Any])?["id"] as? String
            #expect(shown == Self.hostileID, "JSON keeps the exact id")
            #expect(Self.controls(in: json.stdoutText).isEmpty, "JSON escapes them itself")
        }
    }

    @Test("the run's terminal summary escapes control characters from a source or a note")
    func summaryEscapes() {
        var summary = RunSummary(
            runID: "r\u{1B}[2J", mode: "nightly", asOf: Harness.asOf, shard: "0/1", dryRun: false, startedAt: Harness.asOf)
        summary.sources = ["revenuecat": "asked \u{1B}]0;x\u{7} first"]
        summary.sourcesDown = [.init(source: "stripe", since: "2026-06-01T03:00:00Z", reason: "HTTP 503: \u{9B}2J\r\nfake line")]
        let text = TerminalSummary.text(summary, folder: URL(fileURLWithPath: "/tmp/reports/r\u{1B}x"))
        #expect(Self.controls(in: text).isEmpty, "\(Self.controls(in: text).map { $0.value })")
        #expect(text.contains("fake line") && !text.contains("\nfake line"), "a CR LF in a reason does not start a line")
    }
}
