import Foundation
import SubreconCore
import SubreconTestKit
import Testing

@testable import SubreconReports

/// Text from a source or a row never renders as a link or markup in
/// `summary.md`, never adds a metric line, and an accepted valve is not reported as "nothing applied".
@Suite("Hostile text in summary.md and the exposition; the accepted valve")
struct HostileMarkdownTests {
    func hostileSummary() -> RunSummary {
        var summary = ReportFixtures.summary()
        var bucket = FinanceFigures.Bucket(store: "[docs](http://evil.example)", currency: "*EUR*")
        bucket.refunds.count = 1
        summary.finance.buckets = ["x": bucket]
        summary.errorSamples = [
            .init(
                userID: "u*1_<b>`x`", drift: "fetch_error",
                error: "revenuecat: unknown product [x](http://evil) <img src=x> **bold** _em_ ![i](http://evil/i.png) "
                    + "http://evil.example www.evil.example a@evil.example `code` # h ~~s~~ &amp;")
        ]
        return summary
    }

    @Test("summary.md renders a product id [x](http://evil) and a user id with * _ < and backticks as plain text")
    func noLinkOrMarkup() {
        let markdown = SummaryMarkdown.text(hostileSummary())
        #expect(!markdown.contains("[x](http"))
        #expect(!markdown.contains("[docs](http"))
        #expect(!markdown.replacingOccurrences(of: "\\<", with: "").contains("<img"), "only an escaped < is left")
        #expect(!markdown.contains("**bold**"))
        #expect(!markdown.contains("http://"))
        #expect(!markdown.contains("www.evil"))
        let expected1 = #"unknown product \[x\]\(http\://evil\) \<img src=x\> \*\*bold\*\* \_em\_"#
        #expect(markdown.contains(expected1))
        let expected2 = #"\!\[i\]\(http\://evil/i.png\) http\://evil.example www\.evil.example a\@evil.example"#
        #expect(markdown.contains(expected2))
        let expected3 = ##"\`code\` \# h \~\~s\~\~ \&amp;"##
        #expect(markdown.contains(expected3))
        let expected4 = #"| \[docs\]\(http\://evil.example\) | \*EUR\* |"#
        #expect(markdown.contains(expected4))
        // The user id is one code span (the fence longer than its backticks): no emphasis, HTML or code inside.
        #expect(markdown.contains("``u*1_<b>`x` ``") || markdown.contains("`` u*1_<b>`x` ``"))
    }

    @Test("inline escaping leaves plain words, ids and amounts readable")
    func plainTextUnchanged() {
        #expect(SummaryMarkdown.inline("play_store EUR 49.99 fetch_error;row_error") == "play_store EUR 49.99 fetch_error;row_error")
        #expect(SummaryMarkdown.inline("_x") == "\\_x")
        #expect(SummaryMarkdown.inline("a\r\nb|c") == "a\\r\\nb\\|c")
    }

    @Test("a hostile source name or store cannot add a metric line to the exposition")
    func exposition() throws {
        var summary = hostileSummary()
        summary.requests["x\"} 1\nsubrecon_forged 1\n# TYPE subrecon_forged gauge"] = RunSummary.SourceRequests()
        let text = PrometheusExposition.text(summary, lastSuccess: nil)
        let parsed = try PrometheusTextParser(text)
        #expect(!parsed.samples.contains { $0.name.contains("forged") })
        #expect(!text.split(separator: "\n").contains { $0.hasPrefix("subrecon_forged") })
    }

    @Test("after --accept-downgrades the terminal summary and summary.md do not say the valve stopped everything")
    func acceptedValve() {
        var summary = ReportFixtures.summary()
        summary.valve = RunSummary.Valve(threshold: 0.1, heldTier: 6, wouldLoseTier: 4)
        summary.status = .completed
        let folder = URL(fileURLWithPath: "/tmp/run")
        let accepted = TerminalSummary.text(summary, folder: folder)
        #expect(!accepted.contains("TRIPPED") && !accepted.contains("nothing applied"))
        #expect(accepted.contains("accepted by --accept-downgrades"))
        #expect(!SummaryMarkdown.text(summary).contains("nothing applied"))
        summary.status = .valveTripped
        #expect(TerminalSummary.text(summary, folder: folder).contains("TRIPPED, nothing applied"))
    }
}
