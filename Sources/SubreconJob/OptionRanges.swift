import Foundation
import SubreconCore

/// The documented range of every numeric and date option of the commands (README "Options", CONTRACT "Hostile answers and bounded work"). The
/// executable checks them before anything is touched (`run` at the start of its `run()`, so that its metrics are
/// written; the other commands in `validate()`): outside its range an option is exit 64 with one line naming it. Pure.
public enum OptionRanges {
    public static let concurrency = 1...1024
    public static let limit = 1...100_000_000
    public static let lookbackDays = 0...3660
    public static let sweepDays = 0...3660
    public static let sweepFreeDays = 0...3660
    public static let refundReviewCount = 1...1_000_000
    public static let refundReviewDays = 1...3660
    /// `--shard I/N`: N.
    public static let shardCount = 1...4096
    /// `--user-timeout`, `--feed-timeout`, `explain --timeout`: seconds.
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

    /// A whole RFC 3339 instant (a real calendar date, no trailing bytes, years 1970–2200): the same strict parser
    /// every date from a source goes through (`StrictDate`); nil for anything else.
    public static func instant(_ text: String) -> Date? { StrictDate.parse(text) }

    private static func decimal(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : String(value)
    }
}
