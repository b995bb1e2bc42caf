import Foundation
import SubreconCore
import Testing

@Suite("Every instant a report, a key or explain prints is the instant the source stated, to the millisecond")
struct InstantTextTests {
    @Test("an RFC 3339 instant with milliseconds prints back exactly, for every millisecond of a second")
    func everyMillisecond() {
        for year in [1970, 2026, 2199] {
            for millis in 0..<1000 {
                let digits = String(millis)
                let fraction = String(repeating: "0", count: 3 - digits.count) + digits
                let text = "\(year)-03-01T10:11:58.\(fraction)Z"
                guard let date = StrictDate.parse(text) else {
                    Issue.record("\(text) did not parse")
                    continue
                }
                let expected = millis == 0 ? "\(year)-03-01T10:11:58Z" : text
                #expect(ISO8601.string(date) == expected)
            }
        }
    }

    @Test("Google's expiryTime …:58.270Z and epoch milliseconds print as stated, never a millisecond early")
    func statedMilliseconds() throws {
        let google = try #require(StrictDate.parse("2026-11-27T08:15:58.270Z"))
        #expect(ISO8601.string(google) == "2026-11-27T08:15:58.270Z")
        for value: Int64 in [1_764_230_158_270, 1_764_230_158_001, 1_764_230_158_999, 1_000, 1] {
            let date = try #require(StrictDate.epochMilliseconds(value))
            let printed = ISO8601.string(date)
            let back = try #require(ISO8601.date(printed))
            #expect(Int64((back.timeIntervalSince1970 * 1000).rounded()) == value, "\(printed)")
        }
    }
}
