import Foundation
import SubreconCore

/// `finance-FROM-TO.html` (docs/CONTRACT.md, "subrecon finance"): the period on one page, self-contained (inline CSS
/// and SVG; no scripts, no external resources), readable printed: the figures' tables, the gaps, and one chart per
/// figure per currency across the period's nights (refunds, restored, revenue at risk), then one per drift kind of the
/// applied changes. XHTML-clean, like `summary.html`.
public enum FinancePeriodHTML {
    public static func render(_ r: FinancePeriodReport) -> String {
        let esc = SummaryHTML.esc
        var h = """
            <!DOCTYPE html>
            <html lang="en">
            <head>
            <meta charset="utf-8"/>
            <title>subrecon finance \(esc(FinancePeriodText.period(r)))</title>
            <style>
            body { font-family: -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; margin: 24px; color: #1d2430; background: #fff; }
            h1 { font-size: 22px; margin: 0 0 4px 0; } h2 { font-size: 17px; margin: 28px 0 8px 0; } h3 { font-size: 14px; margin: 16px 0 4px 0; }
            .headline { font-size: 15px; margin: 12px 0; padding: 10px 14px; border-radius: 6px; } .ok { background: #e6f4ea; } .warn { background: #fff4e0; }
            table { border-collapse: collapse; font-size: 13px; } th, td { border: 1px solid #9aa3b0; padding: 3px 8px; text-align: right; }
            th { background: #f3f5f8; } td.l, th.l { text-align: left; }
            .chart { page-break-inside: avoid; break-inside: avoid; margin-bottom: 8px; }
            svg text { font-family: inherit; font-size: 11px; fill: #1d2430; }
            @media print { body { margin: 8mm; } .headline { border: 1px solid #1d2430; } }
            </style>
            </head>
            <body>

            """
        h += "<h1>subrecon finance — \(esc(FinancePeriodText.period(r)))</h1>\n"
        h += "<div class=\"headline \(r.isComplete ? "ok" : "warn")\">\(esc(FinancePeriodText.gapWords(r)))</div>\n"
        h += "<p>\(r.runsCounted.count) runs counted; \(r.runsNotCounted.count) not counted (dry runs, failed or unfinished).</p>\n"
        h += "<h2>Flows (counted once each)</h2>\n" + table(r.flows, stock: false)
        h += "<h2>Stocks (as of each shard's last completed night)</h2>\n" + table(r.stocks, stock: true)
        if !r.gaps.isEmpty {
            h +=
                "<h2>Gaps</h2>\n<table><tr><th class=\"l\">night</th><th class=\"l\">shard</th><th class=\"l\">kind</th><th class=\"l\">runs</th></tr>\n"
            for g in r.gaps {
                h += "<tr><td class=\"l\">\(esc(g.night))</td><td class=\"l\">\(esc(g.shard))</td><td class=\"l\">\(esc(g.kind))</td>"
                h += "<td class=\"l\">\(esc(g.runIDs.joined(separator: ", ")))</td></tr>\n"
            }
            h += "</table>\n"
        }
        h += charts(r)
        h += "</body>\n</html>\n"
        return h
    }

    static func table(_ lines: [FinanceLine], stock: Bool) -> String {
        let esc = SummaryHTML.esc
        guard !lines.isEmpty else { return "<p>none</p>\n" }
        var h = "<table><tr><th class=\"l\">figure</th><th class=\"l\">store</th><th class=\"l\">currency</th><th class=\"l\">basis</th>"
        h += stock ? "<th class=\"l\">shard</th><th class=\"l\">night</th>" : ""
        h += "<th>count</th><th>value</th><th>unknown price</th></tr>\n"
        for l in lines {
            let k = l.key
            h += "<tr><td class=\"l\">\(esc(k.figure))</td><td class=\"l\">\(esc(k.store))</td><td class=\"l\">\(esc(k.currency))</td>"
            h += "<td class=\"l\">\(esc(k.basis))</td>"
            h += stock ? "<td class=\"l\">\(esc(k.shard ?? ""))</td><td class=\"l\">\(esc(k.night ?? ""))</td>" : ""
            h += "<td>\(l.count)</td><td>\(esc(FinanceCSV.decimalString(l.value)))</td><td>\(l.unknownPrice)</td></tr>\n"
        }
        return h + "</table>\n"
    }

    /// One chart per figure per currency, then one per drift kind.
    static func charts(_ r: FinancePeriodReport) -> String {
        var currencies = Set<String>()
        for n in r.nights {
            currencies.formUnion(n.refunds.keys)
            currencies.formUnion(n.restored.keys)
            currencies.formUnion(n.atRisk.keys)
        }
        var h = "<h2>Per night, per currency</h2>\n"
        if currencies.isEmpty { h += "<p>No priced flow or stock in the period.</p>\n" }
        let figures: [(String, KeyPath<FinanceNight, [String: Decimal]>)] = [
            ("refunds", \.refunds), ("restored", \.restored), ("revenue at risk (billing issue)", \.atRisk),
        ]
        for currency in currencies.sorted() {
            h += "<h3>\(SummaryHTML.esc(currency))</h3>\n"
            for (name, path) in figures {
                h += chart("\(name), \(currency)", r.nights.map { ($0.night, $0[keyPath: path][currency] ?? 0) })
            }
        }
        let kinds = Set(r.nights.flatMap(\.drift.keys)).sorted(by: FinanceCSV.driftOrder)
        h += "<h2>Drift kinds of the counted changes, per night</h2>\n"
        if kinds.isEmpty { h += "<p>No counted change in the period.</p>\n" }
        for kind in kinds { h += chart(kind, r.nights.map { ($0.night, Decimal($0.drift[kind] ?? 0)) }) }
        return h
    }

    /// A bar chart of one series over the nights: labelled axes (the first and last night, the maximum), a bar per night.
    static func chart(_ title: String, _ points: [(night: String, value: Decimal)]) -> String {
        let esc = SummaryHTML.esc
        let (width, height, left, bottom) = (720.0, 150.0, 70.0, 24.0)
        let maximum = points.map(\.value).max() ?? 0
        let scale = maximum > 0 ? NSDecimalNumber(decimal: maximum).doubleValue : 1
        let step = (width - left - 10) / Double(max(points.count, 1))
        var svg = "<div class=\"chart\"><svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(Int(width))\" height=\"\(Int(height))\""
        svg += " role=\"img\" aria-label=\"\(esc(title))\"><title>\(esc(title))</title>\n"
        svg += "<text x=\"\(Int(left))\" y=\"12\" font-weight=\"600\">\(esc(title))</text>\n"
        svg +=
            "<line x1=\"\(Int(left))\" y1=\"\(Int(height - bottom))\" x2=\"\(Int(width - 10))\" y2=\"\(Int(height - bottom))\" stroke=\"#1d2430\"/>\n"
        svg += "<text x=\"\(Int(left - 4))\" y=\"26\" text-anchor=\"end\">\(esc(FinanceCSV.decimalString(maximum)))</text>\n"
        svg += "<text x=\"\(Int(left - 4))\" y=\"\(Int(height - bottom))\" text-anchor=\"end\">0</text>\n"
        for (i, p) in points.enumerated() {
            let v = NSDecimalNumber(decimal: p.value).doubleValue
            let barHeight = (height - bottom - 22) * v / scale
            let x = left + Double(i) * step + 1
            svg += String(
                format: "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"#4a5a70\"><title>", x,
                height - bottom - barHeight,
                max(1, step - 2), barHeight)
            svg += "\(esc(p.night)): \(esc(FinanceCSV.decimalString(p.value)))</title></rect>\n"
        }
        if let first = points.first, let last = points.last {
            svg += "<text x=\"\(Int(left))\" y=\"\(Int(height - 8))\">\(esc(first.night))</text>\n"
            svg += "<text x=\"\(Int(width - 10))\" y=\"\(Int(height - 8))\" text-anchor=\"end\">\(esc(last.night))</text>\n"
        }
        return svg + "</svg></div>\n"
    }
}
