import Foundation
import SubreconCore
import SubreconReports

/// The period of `subrecon finance` (docs/CONTRACT.md, "subrecon finance"): `[from, to)`, from `--from`/`--to` (whole
/// RFC 3339 instants) or `--month YYYY-MM` (UTC), at most 366 days. Parsed once where it enters; a bad one is exit 64.
public struct FinancePeriodRange: Sendable, Hashable {
    public var from: Date
    public var to: Date
    public static let maximumDays = 366

    public init(from: Date, to: Date) {
        self.from = from
        self.to = to
    }

    /// The period the options name, or a `CommandFailure(.usage)` with one line.
    public static func parse(from: String?, to: String?, month: String?) throws -> FinancePeriodRange {
        let range: FinancePeriodRange
        switch (from, to, month) {
        case (nil, nil, let month?):
            guard let start = monthStart(month) else {
                throw usage("--month must be YYYY-MM, e.g. 2026-11 (got \(month.debugDescription))")
            }
            range = FinancePeriodRange(from: start, to: Self.utc.date(byAdding: .month, value: 1, to: start)!)
        case (let from?, let to?, nil):
            if let problem = OptionRanges.dateProblem("--from", from) ?? OptionRanges.dateProblem("--to", to) { throw usage(problem) }
            range = FinancePeriodRange(from: OptionRanges.instant(from)!, to: OptionRanges.instant(to)!)
        default:
            throw usage("give either --from and --to, or --month (not both)")
        }
        guard range.to > range.from else { throw usage("--to must be after --from") }
        guard range.to.timeIntervalSince(range.from) <= Double(maximumDays) * 86_400 else {
            throw usage("the period is over \(maximumDays) days; close it in shorter periods")
        }
        return range
    }

    /// The nights of the period: the UTC days `[d, d + 1 day)` that meet `[from, to)`, as day starts.
    public var nights: [Date] {
        var day = Self.utc.startOfDay(for: from)
        var days: [Date] = []
        while day < to {
            days.append(day)
            day = Self.utc.date(byAdding: .day, value: 1, to: day)!
        }
        return days
    }

    /// The files' stem: `finance-2026-11-01-2026-12-01` (a bound not at midnight UTC as `2026-11-01T031500Z`).
    public var stem: String { "finance-\(Self.name(from))-\(Self.name(to))" }

    static func name(_ date: Date) -> String {
        let night = FinanceTally.night(of: date)
        guard Self.utc.startOfDay(for: date) != date else { return night }
        let c = Self.utc.dateComponents([.hour, .minute, .second], from: date)
        return night + String(format: "T%02d%02d%02dZ", c.hour ?? 0, c.minute ?? 0, c.second ?? 0)
    }

    static func monthStart(_ text: String) -> Date? {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard text.count == 7, parts.count == 2, parts[0].count == 4, parts[1].count == 2,
            let year = Int(parts[0]), let month = Int(parts[1]), OptionRanges.years.contains(year), (1...12).contains(month)
        else { return nil }
        return Self.utc.date(from: DateComponents(year: year, month: month, day: 1))
    }

    static func usage(_ line: String) -> CommandFailure { CommandFailure(.usage, line) }

    static let utc: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        return calendar
    }()
}
