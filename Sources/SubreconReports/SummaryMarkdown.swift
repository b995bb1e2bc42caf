import Foundation
import SubreconCore

/// `summary.md`: the night in a few lines, for a person (an operator's morning, a finance e-mail).
/// Every number comes from the run summary; nothing here is computed that `summary.json` does not hold.
public enum SummaryMarkdown {
    public static func text(_ s: RunSummary) -> String {
        var lines: [String] = []
        lines.append("# subrecon run \(s.runID)")
        lines.append("")
        let dry = s.dryRun ? " (dry run: nothing written)" : ""
        lines.append("**\(headline(s))**\(dry)")
        lines.append("")
        lines.append("- \(s.mode) run as of \(s.asOf), shard \(s.shard), took \(String(format: "%.1f", s.timings.totalSeconds)) s")
        lines.append(
            "- \(s.candidates) users checked, \(s.applied) rows corrected, errors: \(s.errors), left to webhooks that wrote first: \(s.concurrentUpdates)"
        )
        if let words = s.usersFile?.unmatchedWords { lines.append("- users file: \(inline(words))") }
        lines.append("- actions: \(nonzero(s.actions, order: Action.allCases.map(\.rawValue)))")
        lines.append("- drift: \(nonzero(s.drift.filter { $0.key != Drift.inSync.rawValue }, order: Drift.allCases.map(\.rawValue)))")
        lines.append("- push intents queued: \(s.intentsQueued) (\(s.intentsDeduplicated) already queued before)")
        let requests = s.requests.sorted { $0.key < $1.key }.map {
            "\(inline($0.key)) \($0.value.requests) (\($0.value.rateLimited) × 429, \($0.value.failures) failed)"
        }
        lines.append("- requests: \(requests.isEmpty ? "none" : requests.joined(separator: ", "))")
        for down in s.sourcesDown ?? [] {
            lines.append(
                "- **source down: \(oneLine(down.source))** since \(down.since): \(oneLine(down.reason)); its remaining users were not asked (fetch_error)"
            )
        }
        if let valve = s.valve {
            lines.append(
                "- safety valve: \(valve.wouldLoseTier) of \(valve.heldTier) tier holders would lose it "
                    + "(\(percent(valve.ratio)), limit \(percent(valve.threshold)))\(valveNote(s, valve))")
        }
        let buckets = s.finance.sortedBuckets
        if !buckets.isEmpty {
            lines.append("")
            lines.append("## Finance (source prices only)")
            lines.append("")
            lines.append(
                "| store | currency | money | refunds (paid) | billing issue (at risk, next renewal) | restored (next renewal) | unknown price |"
            )
            lines.append("| --- | --- | --- | --- | --- | --- | --- |")
            for b in buckets {
                let unknown = b.refunds.unknownPrice + b.billingIssueAtRisk.unknownPrice + b.restored.unknownPrice
                lines.append(
                    "| \(cell(b.store)) | \(cell(b.currency)) | \(FinanceCSV.groupWords(b.group)) | \(figure(b.refunds)) | \(figure(b.billingIssueAtRisk)) | \(figure(b.restored)) | \(unknown) |"
                )
            }
        }
        lines += lists(s)
        if !s.errorSamples.isEmpty {
            lines.append("")
            lines.append("## First errors")
            lines.append("")
            for sample in s.errorSamples.prefix(5) {
                lines.append("- \(code(sample.userID)) \(inline(sample.drift)): \(inline(sample.error))")
            }
        }
        lines.append("")
        return lines.joined(separator: "\n")
    }

    /// The lists for a person, one paragraph each when not empty: the refund review and the orphans.
    static func lists(_ s: RunSummary) -> [String] {
        var lines: [String] = []
        if let review = s.refundReview {
            lines += ["", "Refund review: \(FinanceCSV.refundReviewWords(review)) (refund_review.csv)."]
        }
        if let orphans = s.orphans, orphans.count > 0 {
            lines += ["", "Orphans: \(inline(orphans.words)) paying purchases no user holds (orphans.csv)."]
        }
        return lines
    }

    /// One sentence: how the night went.
    public static func headline(_ s: RunSummary) -> String {
        switch s.status {
        case .valveTripped: "Safety valve tripped: nothing was applied; review drift.csv before rerunning."
        case .completedWithErrors:
            "Completed with \(s.errors) user error\(s.errors == 1 ? "" : "s") (left untouched, listed in drift.csv)."
        case .completed: "Completed: every candidate processed."
        case .running, .failed: "Status: \(s.status.rawValue)."
        }
    }

    static func valveNote(_ s: RunSummary, _ valve: SafetyValve) -> String {
        guard valve.tripped else { return "" }
        return s.status == .valveTripped
            ? " — **tripped, nothing applied**" : " — tripped, accepted by --accept-downgrades: applied"
    }

    static func figure(_ f: FinanceFigures.Figure) -> String {
        f.count == 0 ? "0" : "\(f.count) (\(FinanceCSV.decimalString(f.value)))"
    }

    /// Text on one line: CR, LF and other control characters become a visible `\r`, `\n` or U+FFFD, scalar by
    /// scalar (CRLF is one `Character`, so a `Character` replace would miss it).
    static func oneLine(_ text: String) -> String {
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\r": out.append(contentsOf: "\\r".unicodeScalars)
            case "\n": out.append(contentsOf: "\\n".unicodeScalars)
            case "\u{0}"..."\u{1F}", "\u{7F}", "\u{85}", "\u{2028}", "\u{2029}": out.append("\u{FFFD}")
            default: out.append(scalar)
            }
        }
        return String(out)
    }

    /// An inline code span holding `text` exactly (on one line): the fence is one backtick longer than the longest
    /// run of backticks inside, padded with spaces when the text starts or ends with a backtick.
    static func code(_ text: String) -> String {
        let line = oneLine(text)
        var longest = 0
        var run = 0
        for scalar in line.unicodeScalars {
            run = scalar == "`" ? run + 1 : 0
            longest = max(longest, run)
        }
        let fence = String(repeating: "`", count: longest + 1)
        let pad = line.unicodeScalars.first == "`" || line.unicodeScalars.last == "`" ? " " : ""
        return fence + pad + line + pad + fence
    }

    /// A table cell: inline text (`|` escaped with the rest).
    static func cell(_ text: String) -> String { inline(text) }

    /// Text from a source or a row, on one line, that renders as itself (CONTRACT "Hostile answers and bounded work"): no link, emphasis, code, HTML,
    /// heading or autolink. Every ASCII character that can start Markdown markup is backslash-escaped (CommonMark
    /// lets any ASCII punctuation be escaped); `:` and `@` so no URL or address autolinks, the dot of `www.` too.
    /// An `_` between two ASCII letters or digits is left as is: it cannot open or close emphasis.
    static func inline(_ text: String) -> String {
        let scalars = Array(text.unicodeScalars)
        var out = String.UnicodeScalarView()
        for (index, scalar) in scalars.enumerated() {
            let before = index > 0 ? scalars[index - 1] : nil
            let after = index + 1 < scalars.count ? scalars[index + 1] : nil
            var escape = "\\`*[]()<>!#|~&:@{}".unicodeScalars.contains(scalar)
            if scalar == "_" { escape = !(isAlphanumeric(before) && isAlphanumeric(after)) }
            if scalar == "." && index >= 3 { escape = scalars[(index - 3)..<index].allSatisfy { $0 == "w" || $0 == "W" } }
            if escape { out.append("\\") }
            out.append(scalar)
        }
        return oneLine(String(out))
    }

    private static func isAlphanumeric(_ scalar: Unicode.Scalar?) -> Bool {
        guard let scalar, scalar.isASCII else { return false }
        return ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || ("0"..."9").contains(scalar)
    }

    static func percent(_ ratio: Double) -> String { String(format: "%.0f%%", ratio * 100) }

    static func nonzero(_ counts: [String: Int], order: [String]) -> String {
        let rank = { (k: String) in order.firstIndex(of: k) ?? Int.max }
        let parts = counts.filter { $0.value > 0 }.sorted { (rank($0.key), $0.key) < (rank($1.key), $1.key) }
            .map { "\($0.key) \($0.value)" }
        return parts.isEmpty ? "none" : parts.joined(separator: ", ")
    }
}
