import Foundation
import SubreconCore

/// `summary.html`: the night on one page, self-contained (inline CSS and SVG; no scripts, no external resources).
/// Shows the run's figures, a bar chart of drift kinds and billing-issue revenue at risk over the last runs.
/// The markup is XHTML-clean (every element closed, only XML entities) so it can be checked with an XML parser.
public enum SummaryHTML {
    public static func render(_ s: RunSummary, history: [RunHistoryPoint]) -> String {
        let points = RunHistoryPoint.merged(history, current: RunHistoryPoint(summary: s))
        var h = """
            <!DOCTYPE html>
            <html lang="en">
            <head>
            <meta charset="utf-8"/>
            <title>subrecon \(esc(s.runID))</title>
            <style>
            body { font-family: -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; margin: 24px; color: #1d2430; background: #fff; }
            h1 { font-size: 22px; margin: 0 0 4px 0; } h2 { font-size: 17px; margin: 28px 0 8px 0; }
            .meta { color: #5b6575; font-size: 13px; } .headline { font-size: 16px; margin: 12px 0; padding: 10px 14px; border-radius: 6px; }
            .ok { background: #e6f4ea; } .warn { background: #fff4e0; } .bad { background: #fde8e8; }
            .cards { display: flex; flex-wrap: wrap; gap: 12px; }
            .card { border: 1px solid #d9dee7; border-radius: 6px; padding: 10px 14px; min-width: 120px; }
            .card .v { font-size: 24px; font-weight: 600; } .card .k { font-size: 12px; color: #5b6575; }
            table { border-collapse: collapse; font-size: 13px; } th, td { border: 1px solid #d9dee7; padding: 4px 10px; text-align: right; }
            th { background: #f3f5f8; } td.l, th.l { text-align: left; }
            svg text { font-family: inherit; }
            </style>
            </head>
            <body>

            """
        h += "<h1>subrecon — \(esc(s.mode)) run as of \(esc(s.asOf))</h1>\n"
        h += "<div class=\"meta\">run \(esc(s.runID)) · shard \(esc(s.shard)) · started \(esc(s.startedAt))"
        h += String(format: " · took %.1f s", s.timings.totalSeconds) + (s.dryRun ? " · dry run" : "") + "</div>\n"
        let tone = s.status == .completed ? "ok" : (s.status == .valveTripped ? "bad" : "warn")
        h += "<div class=\"headline \(tone)\">\(esc(SummaryMarkdown.headline(s)))</div>\n"

        h += cards(s)

        h += "<h2>Actions</h2>\n<table><tr>"
        let actions = Action.allCases.map(\.rawValue)
        for a in actions { h += "<th>\(esc(a))</th>" }
        h += "</tr><tr>"
        for a in actions { h += "<td>\(s.actions[a] ?? 0)</td>" }
        h += "</tr></table>\n"

        h += "<h2>Drift kinds</h2>\n" + driftChart(s.drift)
        h += "<h2>Finance (source prices only; unknown prices counted, never guessed)</h2>\n" + financeTable(s)
        if let review = s.refundReview {
            h += "<p>Refund review: \(esc(FinanceCSV.refundReviewWords(review))) (refund_review.csv).</p>\n"
        }
        if let orphans = s.orphans, orphans.count > 0 {
            h += "<p>Orphans: \(esc(orphans.words)) paying purchases no user holds (orphans.csv).</p>\n"
        }
        h += "<h2>Revenue at risk (billing issue), last \(points.count) run\(points.count == 1 ? "" : "s")</h2>\n"
        h += revenueCharts(points, currentRunID: s.runID)

        h += "<h2>Requests</h2>\n<table><tr><th class=\"l\">source</th><th>requests</th><th>429</th><th>failed</th></tr>\n"
        for (name, r) in s.requests.sorted(by: { $0.key < $1.key }) {
            h += "<tr><td class=\"l\">\(esc(name))</td><td>\(r.requests)</td><td>\(r.rateLimited)</td><td>\(r.failures)</td></tr>\n"
        }
        h += "</table>\n</body>\n</html>\n"
        return h
    }

    /// The figure cards under the headline.
    static func cards(_ s: RunSummary) -> String {
        var h = "<div class=\"cards\">\n"
        var cards: [(String, String)] = [
            ("users checked", String(s.candidates)), ("rows corrected", String(s.applied)), ("errors", String(s.errors)),
            ("intents queued", String(s.intentsQueued)), ("concurrent updates", String(s.concurrentUpdates)),
        ]
        if let valve = s.valve { cards.append(("would lose tier", "\(valve.wouldLoseTier) / \(valve.heldTier)")) }
        for (key, value) in cards {
            h += "<div class=\"card\"><div class=\"v\">\(esc(value))</div><div class=\"k\">\(esc(key))</div></div>\n"
        }
        return h + "</div>\n"
    }

    static func driftChart(_ drift: [String: Int]) -> String {
        let kinds = drift.filter { $0.value > 0 }.keys.sorted(by: FinanceCSV.driftOrder)
        guard !kinds.isEmpty else { return "<p>No users checked.</p>\n" }
        let errorKinds: Set<String> = [
            Drift.fetchError.rawValue, Drift.rowError.rawValue, Drift.verificationFailed.rawValue, Drift.unknownAtSource.rawValue,
            Drift.unknownProduct.rawValue,
        ]
        let maxCount = max(1, kinds.map { drift[$0] ?? 0 }.max() ?? 1)
        let rowHeight = 26
        let labelWidth = 190
        let barMax = 560
        let width = 860
        let height = kinds.count * rowHeight + 10
        var svg =
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(width)\" height=\"\(height)\" viewBox=\"0 0 \(width) \(height)\" role=\"img\" aria-label=\"drift kinds\">\n"
        for (i, kind) in kinds.enumerated() {
            let count = drift[kind] ?? 0
            let y = 5 + i * rowHeight
            let w = max(2, Int((Double(count) / Double(maxCount) * Double(barMax)).rounded()))
            let color = kind == Drift.inSync.rawValue ? "#9aa5b5" : (errorKinds.contains(kind) ? "#d64545" : "#e39a2d")
            svg += "<text x=\"\(labelWidth - 8)\" y=\"\(y + 17)\" font-size=\"13\" text-anchor=\"end\" fill=\"#1d2430\">\(esc(kind))</text>"
            svg += "<rect x=\"\(labelWidth)\" y=\"\(y + 3)\" width=\"\(w)\" height=\"\(rowHeight - 8)\" fill=\"\(color)\" rx=\"2\"/>"
            svg += "<text x=\"\(labelWidth + w + 6)\" y=\"\(y + 17)\" font-size=\"13\" fill=\"#1d2430\">\(count)</text>\n"
        }
        return svg + "</svg>\n"
    }

    /// The finance table's column headings, in words for a finance reader (in `FinanceCSV.figures` order).
    static let financeHeadings = [
        "Users whose tier was revoked by a refund", "Refunded value (what they paid)",
        "Users in billing issue", "Revenue at risk (their next renewal price)",
        "Users restored", "Restored value (their next renewal price)",
    ]

    static func financeTable(_ s: RunSummary) -> String {
        let buckets = s.finance.sortedBuckets
        guard !buckets.isEmpty else { return "<p>No refunds, billing issues or restorations.</p>\n" }
        var t = "<table><tr><th class=\"l\">Store</th><th class=\"l\">Currency</th><th class=\"l\">Kind of money</th>"
        for heading in financeHeadings { t += "<th>\(esc(heading))</th>" }
        t += "<th>Users whose price no source stated</th></tr>\n"
        for b in buckets {
            t += "<tr><td class=\"l\">\(esc(b.store))</td><td class=\"l\">\(esc(b.currency))</td>"
            t += "<td class=\"l\">\(esc(FinanceCSV.groupWords(b.group)))</td>"
            var unknown = 0
            for (_, f) in FinanceCSV.figures(b) {
                t += "<td>\(f.count)</td><td>\(esc(FinanceCSV.decimalString(f.value)))</td>"
                unknown += f.unknownPrice
            }
            t += "<td>\(unknown)</td></tr>\n"
        }
        return t + "</table>\n"
    }

    static func revenueCharts(_ points: [RunHistoryPoint], currentRunID: String) -> String {
        // Currencies with revenue at risk in at least one of the runs (a price of 0 or unknown charts nothing).
        let currencies = Set(points.flatMap { $0.atRisk.filter { $0.key != "unknown" && $0.value > 0 }.keys }).sorted()
        guard !currencies.isEmpty else { return "<p>No revenue at risk with a known price in these runs.</p>\n" }
        return currencies.map { revenueChart(points, currency: $0, currentRunID: currentRunID) }.joined()
    }

    static func revenueChart(_ points: [RunHistoryPoint], currency: String, currentRunID: String) -> String {
        let values = points.map { Double(FinanceCSV.decimalString($0.atRisk[currency] ?? 0)) ?? 0 }
        let maxValue = max(values.max() ?? 0, 0.01)
        let width = 860
        let height = 260
        let left = 70
        let top = 24
        let plotHeight = 180
        let plotWidth = 770
        let slot = Double(plotWidth) / Double(max(points.count, 1))
        let barWidth = max(4, min(36, slot - 6))
        var svg =
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(width)\" height=\"\(height)\" viewBox=\"0 0 \(width) \(height)\" role=\"img\" aria-label=\"revenue at risk \(esc(currency))\">\n"
        svg += "<text x=\"0\" y=\"14\" font-size=\"13\" font-weight=\"600\" fill=\"#1d2430\">\(esc(currency))</text>\n"
        let baseline = top + plotHeight
        svg += "<line x1=\"\(left)\" y1=\"\(baseline)\" x2=\"\(left + plotWidth)\" y2=\"\(baseline)\" stroke=\"#9aa5b5\"/>"
        svg += "<line x1=\"\(left)\" y1=\"\(top)\" x2=\"\(left)\" y2=\"\(baseline)\" stroke=\"#9aa5b5\"/>\n"
        svg +=
            "<text x=\"\(left - 6)\" y=\"\(top + 4)\" font-size=\"11\" text-anchor=\"end\" fill=\"#5b6575\">\(esc(format(maxValue)))</text>"
        svg += "<text x=\"\(left - 6)\" y=\"\(baseline + 4)\" font-size=\"11\" text-anchor=\"end\" fill=\"#5b6575\">0</text>\n"
        let labelEvery = points.count > 15 ? 2 : 1
        for (i, point) in points.enumerated() {
            let x = Double(left) + slot * Double(i) + (slot - barWidth) / 2
            let barHeight = values[i] / maxValue * Double(plotHeight)
            let color = point.runID == currentRunID ? "#d64545" : "#e39a2d"
            svg += String(
                format: "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%@\">", x, Double(baseline) - barHeight,
                barWidth, max(barHeight, 0.5), color)
            svg +=
                "<title>\(esc(point.runID)): \(esc(FinanceCSV.decimalString(point.atRisk[currency] ?? 0))) \(esc(currency))</title></rect>"
            let center = x + barWidth / 2
            if values[i] > 0 {
                svg += String(
                    format: "<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\" text-anchor=\"middle\" fill=\"#1d2430\">%@</text>", center,
                    Double(baseline) - barHeight - 4, esc(format(values[i])))
            }
            if (points.count - 1 - i) % labelEvery == 0 {
                svg += String(
                    format: "<text x=\"%.1f\" y=\"%d\" font-size=\"10\" text-anchor=\"middle\" fill=\"#5b6575\">%@</text>", center,
                    baseline + 16, esc(day(point.startedAt)))
            }
            svg += "\n"
        }
        svg += "<text x=\"\(left)\" y=\"\(height - 8)\" font-size=\"11\" fill=\"#5b6575\">run start (UTC); the latest run in red</text>\n"
        return svg + "</svg>\n"
    }

    static func format(_ value: Double) -> String { String(format: "%.2f", value) }

    static func day(_ date: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let c = calendar.dateComponents([.month, .day], from: date)
        return String(format: "%02d-%02d", c.month ?? 0, c.day ?? 0)
    }

    /// Escapes text for HTML/XML content and attribute values.
    /// HTML-escapes `text` scalar by scalar (a `<` or `&` followed by a combining mark is still escaped); control
    /// characters other than TAB, LF and CR, which HTML does not allow, become U+FFFD.
    public static func esc(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            case "\t", "\n", "\r": out.unicodeScalars.append(scalar)
            case "\u{0}"..."\u{1F}", "\u{7F}": out += "\u{FFFD}"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}
