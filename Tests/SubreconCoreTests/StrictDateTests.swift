import Foundation
import SubreconCore
import Testing

/// `StrictDate`: the one reader of outside instants (CONTRACT "Hostile answers and bounded work"). Table tests; `StrictDatePropertyTests` generates.
@Suite("StrictDate: a whole RFC 3339 value or epoch time in 1970...2200, anything else unusable")
struct StrictDateTests {
    static let valid: [(String, Double)] = [
        ("2026-03-01T02:00:05Z", 1_772_330_405), ("2026-03-01t02:00:05z", 1_772_330_405),
        ("2026-03-01T02:00:05.5Z", 1_772_330_405.5), ("2026-03-01T02:00:05.123456789Z", 1_772_330_405.123456789),
        ("2026-03-01T04:00:05+02:00", 1_772_330_405), ("2026-02-28T21:30:05-04:30", 1_772_330_405),
        ("2026-03-01T02:00:05-00:00", 1_772_330_405), ("2024-02-29T12:00:00Z", 1_709_208_000),
        ("2000-02-29T00:00:00Z", 951_782_400), ("1970-01-01T00:00:00Z", 0),
        ("2200-12-31T23:59:59.999Z", 7_289_654_399.999),
    ]

    @Test("whole RFC 3339 values: fractional seconds (1 to 9 digits), Z or an offset, leap days", arguments: valid)
    func accepted(text: String, seconds: Double) throws {
        let date = try #require(StrictDate.parse(text))
        #expect(abs(date.timeIntervalSince1970 - seconds) < 0.000_01)
    }

    static let rejected: [String] = [
        // bytes after a valid value
        "2027-01-01T00:00:00Z\u{0}", #"2027-01-01T00:00:00Z\u0000"#, "2027-01-01T00:00:00Z ", "2027-01-01T00:00:00ZZ",
        "2027-01-01T00:00:00Z0", "2027-01-01T00:00:00+02:00x", "2027-01-01T00:00:00+02:000", " 2027-01-01T00:00:00Z",
        // years outside 1970...2200
        "2999-01-01T00:00:00Z", "1969-12-31T23:59:59Z", "2201-01-01T00:00:00Z", "99999-01-01T00:00:00Z",
        "+275760-09-13T00:00:00Z", "1970-01-01T00:00:00+00:01", "2200-12-31T23:59:59-00:01",
        // impossible calendar dates and times
        "2026-02-30T00:00:00Z", "2025-02-29T00:00:00Z", "2100-02-29T00:00:00Z", "2026-13-01T00:00:00Z",
        "2026-00-10T00:00:00Z", "2026-01-00T00:00:00Z", "2026-04-31T00:00:00Z", "2026-01-01T24:00:00Z",
        "2026-01-01T23:60:00Z", "2026-01-01T23:59:60Z", "2026-01-01T00:00:00+24:00", "2026-01-01T00:00:00+02:60",
        // not RFC 3339
        "2026-07-01", "2026-07-01T00:00:00", "2026-07-01 00:00:00Z", "2026-07-01T00:00:00+0200", "2026-07-01T00:00:00.Z",
        "2026-07-01T00:00:00.1234567890Z", "2026-7-01T00:00:00Z", "２０２６-07-01T00:00:00Z", "", "tomorrow",
        "2026-07-01T00:00:00+02", "2026-07-01T00:00Z",
    ]

    @Test("trailing bytes, out-of-range years, impossible dates and other shapes are unusable", arguments: rejected)
    func rejectedText(text: String) {
        #expect(StrictDate.parse(text) == nil)
    }

    @Test("the latest instant is 2200-12-31T23:59:59.999Z")
    func latest() {
        #expect(StrictDate.latestMilliseconds == 7_289_654_399_999)
        #expect(SourceNumber.latestMilliseconds == StrictDate.latestMilliseconds)
    }

    @Test("epoch milliseconds and seconds: 1970...2200 only; seconds are whole")
    func epochs() {
        let latest = StrictDate.latestMilliseconds
        #expect(StrictDate.epochMilliseconds(Int64(0)) == Date(timeIntervalSince1970: 0))
        #expect(StrictDate.epochMilliseconds(latest) != nil)
        for value: Int64 in [-1, latest + 1, 32_503_680_000_000, .max, .min] { #expect(StrictDate.epochMilliseconds(value) == nil) }
        for value: Double in [.nan, .infinity, -1, Double(latest) + 1, 1e19] { #expect(StrictDate.epochMilliseconds(value) == nil) }
        #expect(StrictDate.epochMilliseconds(text: "1772302931000") == Date(timeIntervalSince1970: 1_772_302_931))
        for text in ["", "-1", "+1", " 1", "1.5", "1772302931000\u{0}", "32503680000000", "99999999999999999999"] {
            #expect(StrictDate.epochMilliseconds(text: text) == nil)
        }
        #expect(StrictDate.epochSeconds(Int64(1_772_302_931)) == Date(timeIntervalSince1970: 1_772_302_931))
        #expect(StrictDate.epochSeconds(latest / 1000) != nil)
        for value: Int64 in [-1, latest / 1000 + 1, 32_503_680_000] { #expect(StrictDate.epochSeconds(value) == nil) }
        for value: Double in [1.5, .nan, .infinity, -1, 32_503_680_000] { #expect(StrictDate.epochSeconds(value) == nil) }
        #expect(StrictDate.epochSeconds(1_772_302_931.0) != nil)
    }
}
