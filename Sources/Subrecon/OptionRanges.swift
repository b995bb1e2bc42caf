import Foundation

/// The documented range of every numeric and date option of the commands (README "Options", SPEC 5.11). The
/// executable checks them in `validate()`, before anything is touched: outside its range an option is exit 64 with
/// one line naming it. Pure.
public enum OptionRanges {
    public static let concurrency = 1...1024
    public static let limit = 1...100_000_000
    public static let lookbackDays = 0...3660
    public static let sweepDays = 0...3660
    public static let refundReviewCount = 1...1_000_000
    public static let refundReviewDays = 1...3660
    /// `--shard I/N`: N.
    public static let shardCount = 1...4096
    /// `--user-timeout`, seconds.
    public static let userTimeoutSeconds = 0.001...3600.0
    public static let maxDowngradeRatio = 0.0...1.0
    /// `--revenuecat-rps`, `--app-store-rps`, `--google-play-rps`, `--stripe-rps` (0 = unlimited).
    public static let requestsPerSecond = 0.0...100_000.0
    /// The years a date option may name (whole RFC 3339 instants only).
    public static let years = 1970...2200

    /// The line for an integer option outside `range`; nil when it is inside.
    public static func problem(_ name: String, _ value: Int, _ range: ClosedRange<Int>) -> String? {
        range.contains(value) ? nil : "\(name) must be \(range.lowerBound)...\(range.upperBound) (got \(value))"
    }

    /// The line for a number option that is not finite or outside `range`; nil when it is inside.
    public static func problem(_ name: String, _ value: Double, _ range: ClosedRange<Double>) -> String? {
        value.isFinite && range.contains(value)
            ? nil : "\(name) must be a finite number in \(decimal(range.lowerBound))...\(decimal(range.upperBound)) (got \(value))"
    }

    /// The line for a date option that is not a whole RFC 3339 instant in `years`; nil when it is one.
    public static func dateProblem(_ name: String, _ text: String) -> String? {
        instant(text) == nil
            ? "\(name) must be a whole RFC 3339 instant in the years \(years.lowerBound)–\(years.upperBound), e.g. 2026-11-22T03:00:00Z"
            : nil
    }

    /// A whole RFC 3339 instant (`YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)`, a real calendar date, no trailing
    /// bytes) whose year is in `years` and whose instant is not before 1970; nil for anything else.
    public static func instant(_ text: String) -> Date? {
        let pattern = /(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})/
        guard text.utf8.allSatisfy({ $0 < 0x80 }), let match = text.wholeMatch(of: pattern),
            let year = Int(match.1), let month = Int(match.2), let day = Int(match.3),
            let hour = Int(match.4), let minute = Int(match.5), let second = Int(match.6),
            years.contains(year), (1...12).contains(month), (1...daysIn(month, year)).contains(day),
            (0...23).contains(hour), (0...59).contains(minute), (0...59).contains(second)
        else { return nil }
        let fraction = match.7.flatMap { Double("0" + $0) } ?? 0
        var offset = 0
        let zone = match.8
        if zone != "Z" && zone != "z" {
            let parts = zone.dropFirst().split(separator: ":")
            guard parts.count == 2, let h = Int(parts[0]), let m = Int(parts[1]), (0...23).contains(h), (0...59).contains(m)
            else { return nil }
            offset = (zone.hasPrefix("-") ? -1 : 1) * (h * 3600 + m * 60)
        }
        let seconds = daysSinceEpoch(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second - offset
        guard seconds >= 0 else { return nil }
        return Date(timeIntervalSince1970: Double(seconds) + fraction)
    }

    static func daysIn(_ month: Int, _ year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days from 1970-01-01 to the proleptic Gregorian date (Howard Hinnant's `days_from_civil`).
    static func daysSinceEpoch(_ year: Int, _ month: Int, _ day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    private static func decimal(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : String(value)
    }
}
