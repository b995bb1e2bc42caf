import Foundation
import SubreconCore
import Testing

@Suite("Source text and numbers: hostile bytes defused, out-of-range numbers unknown, never a trap")
struct SourceTextTests {
    @Test("a JSON-escaped NUL becomes visible text; an escaped backslash before u0000 is left alone")
    func nulEscapes() throws {
        let body = Data(#"{"a":"x\u0000y","b":"\\u0000","c":"\\\u0000"}"#.utf8)
        let decoded = try JSONDecoder().decode([String: String].self, from: SourceText.sanitizedJSON(body))
        #expect(decoded["a"] == #"x\u0000y"#)
        #expect(decoded["b"] == #"\u0000"#)
        #expect(decoded["c"] == #"\\u0000"#)
        #expect(decoded.values.allSatisfy { !$0.unicodeScalars.contains("\u{0}") })
    }

    @Test("invalid UTF-8 is repaired to U+FFFD and the body still decodes")
    func invalidUTF8() throws {
        let body = Data([UInt8(ascii: "\""), 0x61, 0xFF, 0xC3, 0x28, 0x62, UInt8(ascii: "\"")])
        let decoded = try JSONDecoder().decode(String.self, from: SourceText.sanitizedJSON(body))
        #expect(decoded == "a\u{FFFD}\u{FFFD}(b")
    }

    @Test("jsonbText makes every NUL a PostgreSQL jsonb accepts, and sanitized() does the same for plain text")
    func jsonb() throws {
        let json = try JSONEncoder().encode(["id": "a\u{0}b"])
        let text = SourceText.jsonbText(json)
        #expect(!text.contains(#"\u0000"#) || text.contains(#"\\u0000"#))
        let back = try JSONDecoder().decode([String: String].self, from: Data(text.utf8))
        #expect(back["id"] == #"a\u0000b"#)
        #expect(SourceText.sanitized("a\u{0}\u{0}") == #"a\u0000\u0000"#)
        #expect(SourceText.sanitized("plain") == "plain")
    }

    @Test(
        "Unix milliseconds: 1970 to 2200 only, from numbers, doubles and digit strings",
        arguments: [
            ("0", true), ("7289654399999", true), ("7289654400000", false), ("253402300799999", false), ("253402300800000", false),
            ("-1", false), ("9223372036854775807", false),
            ("9223372036854775808", false), ("99999999999999999999", false), (" 1", false), ("1.5", false), ("", false),
            ("+1", false), ("1772302931000", true),
        ])
    func milliseconds(text: String, valid: Bool) {
        #expect((SourceNumber.date(unixMilliseconds: text) != nil) == valid)
    }

    @Test("doubles: not finite, huge or negative dates are unknown; int64 conversions never trap")
    func doubles() {
        for value in [Double.infinity, -.infinity, .nan, 1e19, 1e300, -1, 7_289_654_400_000, 253_402_300_800_000] {
            #expect(SourceNumber.date(unixMilliseconds: value) == nil)
        }
        #expect(SourceNumber.date(unixMilliseconds: 1772302931000.5) != nil)
        #expect(SourceNumber.int64(1e19) == nil)
        #expect(SourceNumber.int64(9_223_372_036_854_775_808.0) == nil)
        #expect(SourceNumber.int64(-9_223_372_036_854_775_808.0) == .min)
        #expect(SourceNumber.int64(.nan) == nil && SourceNumber.int64(.infinity) == nil)
        #expect(SourceNumber.int64(-2.9) == -2)
        #expect(SourceNumber.saturatingInt64(1e19) == .max && SourceNumber.saturatingInt64(-.infinity) == .min)
        #expect(SourceNumber.saturatingInt64(.nan) == nil)
        #expect(SourceNumber.isPlausible(Date(timeIntervalSince1970: 1e12)) == false)
    }
}
