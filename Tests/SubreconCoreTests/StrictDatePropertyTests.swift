import Foundation
import PropertyBased
import SubreconCore
import Testing

/// Properties of `StrictDate.parse` over generated instants, suffixes and calendar fields. The oracle for calendar
/// validity is Foundation's Gregorian calendar (`DateComponents.isValidDate`), independent of the parser.
@Suite("StrictDate: properties over generated values")
struct StrictDatePropertyTests {
    static let checks = 2_000
    static let latest = StrictDate.latestMilliseconds

    /// RFC 3339 text of `milliseconds` (UTC, `Z`), the fraction written from the integer: exact.
    static func text(_ milliseconds: Int64) -> String {
        let whole = ISO8601.string(Date(timeIntervalSince1970: Double(milliseconds / 1000)))
        let fraction = milliseconds % 1000
        return fraction == 0 ? whole : String(whole.dropLast()) + String(format: ".%03d", Int(fraction)) + "Z"
    }

    @Test("any instant in 1970...2200 written as RFC 3339 (UTC) reads back to the same millisecond")
    func roundTrip() async {
        await propertyCheck(count: Self.checks, input: Gen.int64(in: 0...Self.latest)) { milliseconds in
            let text = Self.text(milliseconds)
            let date = StrictDate.parse(text)
            #expect(date.map { Int64(($0.timeIntervalSince1970 * 1000).rounded()) } == milliseconds, "\(text)")
        }
    }

    @Test("the same instant written with any offset reads back to the same instant")
    func offsets() async {
        let day: Int64 = 86_400_000
        await propertyCheck(
            count: Self.checks, input: Gen.int64(in: day...(Self.latest - day)), Gen.int(in: -(23 * 60 + 59)...(23 * 60 + 59))
        ) {
            milliseconds, minutes in
            let local = Self.text(milliseconds + Int64(minutes) * 60_000)
            let offset = (minutes < 0 ? "-" : "+") + String(format: "%02d:%02d", abs(minutes) / 60, abs(minutes) % 60)
            let text = String(local.dropLast()) + offset
            let date = StrictDate.parse(text)
            #expect(date.map { Int64(($0.timeIntervalSince1970 * 1000).rounded()) } == milliseconds, "\(text)")
        }
    }

    static let suffixBytes: [UInt8] = [0, 0x20, 0x09, 0x0A, 0xFF] + Array("0123456789Zz+-:.T\\u\"".utf8)

    @Test("a valid value followed by any non-empty suffix of bytes is unusable")
    func suffixes() async {
        await propertyCheck(
            count: Self.checks, input: Gen.int64(in: 0...Self.latest), Gen.element(of: Self.suffixBytes).array(of: 1...6), Gen.bool
        ) { milliseconds, suffix, withOffset in
            var text = Self.text(milliseconds)
            if withOffset { text = String(text.dropLast()) + "+00:00" }
            let hostile = text + String(decoding: suffix.compactMap { $0 }, as: UTF8.self)
            #expect(StrictDate.parse(hostile) == nil, "\(hostile.debugDescription)")
        }
    }

    static let utc: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(secondsFromGMT: 0)!
        return calendar
    }()

    @Test("calendar fields: read exactly when they name a real date and time in 1970...2200")
    func calendarFields() async {
        await propertyCheck(
            count: Self.checks, input: Gen.int(in: 1965...2206), Gen.int(in: 0...13), Gen.int(in: 0...32), Gen.int(in: 0...24),
            Gen.int(in: 0...60), Gen.int(in: 0...60)
        ) { year, month, day, hour, minute, second in
            let text = String(format: "%04d-%02d-%02dT%02d:%02d:%02dZ", year, month, day, hour, minute, second)
            let components = DateComponents(
                calendar: Self.utc, timeZone: Self.utc.timeZone, year: year, month: month, day: day, hour: hour, minute: minute,
                second: second)
            let real = (1...12).contains(month) && hour < 24 && minute < 60 && second < 60 && components.isValidDate
            let expected = real && (1970...2200).contains(year) ? components.date : nil
            #expect(StrictDate.parse(text) == expected, "\(text)")
        }
    }
}
