import Foundation
import SubreconCore

/// Adds finance details into a period's figures (docs/CONTRACT.md, "subrecon finance"): each detail into the line of its
/// key and into its night's series. The figures are therefore exactly the sums of the details added.
public struct FinanceTally: Sendable {
    public private(set) var flows: [FinanceLine.Key: FinanceLine] = [:]
    public private(set) var stocks: [FinanceLine.Key: FinanceLine] = [:]
    public private(set) var nights: [String: FinanceNight] = [:]

    public init() {}

    /// Counts `detail` into its line (flows and stocks) and, for flows, into the series of its night.
    public mutating func add(_ detail: FinanceDetail) {
        var line = (detail.section == .flow ? flows : stocks)[detail.key] ?? FinanceLine(key: detail.key)
        line.count += 1
        if let amount = detail.amount { line.value += amount } else { line.unknownPrice += 1 }
        switch detail.section {
        case .flow: flows[detail.key] = line
        case .stock: stocks[detail.key] = line
        }
        guard detail.section == .flow, let amount = detail.amount, detail.currency != "unknown" else { return }
        let night = FinanceTally.night(of: detail.instant)
        var point = nights[night] ?? FinanceNight(night: night)
        switch detail.figure {
        case "refunds": point.refunds[detail.currency, default: 0] += amount
        case "restored": point.restored[detail.currency, default: 0] += amount
        default: break
        }
        nights[night] = point
    }

    /// The drift kinds of a night's applied change, for the series.
    public mutating func addDrift(_ kinds: [String], night: String) {
        var point = nights[night] ?? FinanceNight(night: night)
        for kind in kinds where kind != Drift.inSync.rawValue { point.drift[kind, default: 0] += 1 }
        nights[night] = point
    }

    /// A completed night's revenue at risk (one shard's run), for the series only: the stocks are counted once, as of
    /// each shard's last night, by `add`.
    public mutating func addAtRisk(_ detail: FinanceDetail, night: String) {
        guard let amount = detail.amount, detail.currency != "unknown", detail.figure == "billing_issue_at_risk" else { return }
        var point = nights[night] ?? FinanceNight(night: night)
        point.atRisk[detail.currency, default: 0] += amount
        nights[night] = point
    }

    /// The figures into `report`, in report order, with a series point for every night of `nights`.
    public func fill(_ report: inout FinancePeriodReport, nights days: [String]) {
        report.flows = flows.values.sorted { $0.key < $1.key }
        report.stocks = stocks.values.sorted { $0.key < $1.key }
        report.nights = days.map { nights[$0] ?? FinanceNight(night: $0) }
    }

    /// The UTC day of an instant (`2026-11-14`).
    public static func night(of instant: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let c = calendar.dateComponents([.year, .month, .day], from: instant)
        return String(format: "%04d-%02d-%02d", c.year ?? 0, c.month ?? 0, c.day ?? 0)
    }
}
