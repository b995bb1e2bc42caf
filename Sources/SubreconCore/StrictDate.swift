import Foundation

/// The one reader of instants that come from outside (CONTRACT "Hostile answers and bounded work"): a whole RFC 3339 value, or Unix milliseconds or
/// seconds, from 1970-01-01T00:00:00Z to 2200-12-31T23:59:59.999Z. Anything else (bytes after a valid value, an
/// impossible calendar date, a year outside 1970–2200, a leap second, a missing offset) is nil: the caller decides
/// whether that makes the user's evidence unusable (a field present but unusable) or not (a field absent).
///
/// Hand-written over UTF-8 bytes: no Foundation formatter, so no leniency about trailing bytes or rolled-over dates.
/// Pure; never traps, whatever the input.
public enum StrictDate {
    public static let earliestYear: Int64 = 1970
    public static let latestYear: Int64 = 2200
    /// 2200-12-31T23:59:59.999Z in Unix milliseconds.
    public static let latestMilliseconds: Int64 = daysFromCivil(year: latestYear + 1, month: 1, day: 1) * 86_400_000 - 1
    /// The longest text read: `2200-12-31T23:59:59.123456789+00:00` is 35 bytes.
    static let longestText = 35

    /// `YYYY-MM-DDTHH:MM:SS[.f{1,9}](Z|±hh:mm)` (`T` and `Z` in either case) as an instant; nil for anything else.
    public static func parse(_ text: String) -> Date? {
        let count = text.utf8.count
        guard count >= 20, count <= longestText else { return nil }
        return parse(bytes: Array(text.utf8))
    }

    /// The calendar part: year, month, day, hour, minute, second; nil unless it is a real date and time.
    private static func civil(_ b: [UInt8]) -> (days: Int64, seconds: Int64)? {
        guard let year = number(b, 0, 4), byte(b, 4) == dash, let month = number(b, 5, 2), byte(b, 7) == dash,
            let day = number(b, 8, 2), byte(b, 10) | 0x20 == UInt8(ascii: "t"), let hour = number(b, 11, 2),
            byte(b, 13) == colon, let minute = number(b, 14, 2), byte(b, 16) == colon, let second = number(b, 17, 2)
        else { return nil }
        guard (earliestYear...latestYear).contains(year), (1...12).contains(month),
            day >= 1, day <= daysIn(month: month, year: year), hour < 24, minute < 60, second < 60
        else { return nil }
        return (daysFromCivil(year: year, month: month, day: day), hour * 3600 + minute * 60 + second)
    }

    static func parse(bytes b: [UInt8]) -> Date? {
        guard let (days, secondOfDay) = civil(b) else { return nil }
        var index = 19
        var nanoseconds: Int64 = 0
        if byte(b, index) == UInt8(ascii: ".") {
            index += 1
            let start = index
            while index < b.count, isDigit(b[index]) { index += 1 }
            let digits = index - start
            guard (1...9).contains(digits), let fraction = number(b, start, digits) else { return nil }
            nanoseconds = fraction * power10(9 - digits)
        }
        let offset: Int64
        switch byte(b, index) {
        case UInt8(ascii: "Z"), UInt8(ascii: "z"):
            offset = 0
            index += 1
        case UInt8(ascii: "+"), UInt8(ascii: "-"):
            guard let hours = number(b, index + 1, 2), byte(b, index + 3) == colon, let minutes = number(b, index + 4, 2),
                hours < 24, minutes < 60
            else { return nil }
            offset = (hours * 3600 + minutes * 60) * (b[index] == UInt8(ascii: "-") ? -1 : 1)
            index += 6
        default:
            return nil
        }
        guard index == b.count else { return nil }
        let seconds = days * 86_400 + secondOfDay - offset
        guard seconds >= 0, seconds * 1000 + nanoseconds / 1_000_000 <= latestMilliseconds else { return nil }
        // Whole seconds exactly, then the fraction: one rounding, as Foundation's own parsers do.
        return Date(timeIntervalSinceReferenceDate: Double(seconds - 978_307_200) + Double(nanoseconds) / 1e9)
    }

    /// Unix milliseconds in 1970...2200 as an instant; nil outside.
    public static func epochMilliseconds(_ value: Int64) -> Date? {
        guard value >= 0, value <= latestMilliseconds else { return nil }
        return Date(timeIntervalSince1970: Double(value) / 1000)
    }

    /// Unix milliseconds given as a JSON number (maybe fractional, huge or not finite); nil outside 1970...2200.
    public static func epochMilliseconds(_ value: Double) -> Date? {
        guard value.isFinite, value >= 0, value <= Double(latestMilliseconds) else { return nil }
        return Date(timeIntervalSince1970: value / 1000)
    }

    /// Unix milliseconds written as decimal digits only (no sign, space or fraction); nil for anything else.
    public static func epochMilliseconds(text: String) -> Date? {
        let bytes = Array(text.utf8)
        guard !bytes.isEmpty, bytes.count <= 18, let value = number(bytes, 0, bytes.count) else { return nil }
        return epochMilliseconds(value)
    }

    /// Whole Unix seconds in 1970...2200 as an instant; nil outside.
    public static func epochSeconds(_ value: Int64) -> Date? {
        guard value >= 0, value <= latestMilliseconds / 1000 else { return nil }
        return Date(timeIntervalSince1970: Double(value))
    }

    /// Unix seconds given as a JSON number: whole, finite and in 1970...2200; nil otherwise.
    public static func epochSeconds(_ value: Double) -> Date? {
        guard value.isFinite, value.rounded(.towardZero) == value, value >= 0, value <= Double(latestMilliseconds / 1000)
        else { return nil }
        return Date(timeIntervalSince1970: value)
    }

    /// True when `date` lies in 1970...2200.
    public static func isInRange(_ date: Date) -> Bool {
        let milliseconds = date.timeIntervalSince1970 * 1000
        return milliseconds.isFinite && milliseconds >= 0 && milliseconds <= Double(latestMilliseconds)
    }

    /// Days from 1970-01-01 to a proleptic Gregorian date (H. Hinnant's `days_from_civil`), for years ≥ 1.
    static func daysFromCivil(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = y / 400
        let yearOfEra = y - era * 400
        let shiftedMonth = (month + 9) % 12
        let dayOfYear = (153 * shiftedMonth + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    static func daysIn(month: Int64, year: Int64) -> Int64 {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    private static let dash = UInt8(ascii: "-")
    private static let colon = UInt8(ascii: ":")

    private static func byte(_ bytes: [UInt8], _ index: Int) -> UInt8 { index < bytes.count ? bytes[index] : 0 }

    private static func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    /// `count` (≤ 18) ASCII digits at `start` as a number; nil when out of bounds or not all digits.
    private static func number(_ bytes: [UInt8], _ start: Int, _ count: Int) -> Int64? {
        guard count >= 1, count <= 18, start >= 0, start + count <= bytes.count else { return nil }
        var value: Int64 = 0
        for byte in bytes[start..<(start + count)] {
            guard isDigit(byte) else { return nil }
            value = value * 10 + Int64(byte - UInt8(ascii: "0"))
        }
        return value
    }

    private static func power10(_ exponent: Int) -> Int64 {
        var value: Int64 = 1
        for _ in 0..<max(exponent, 0) { value *= 10 }
        return value
    }
}
