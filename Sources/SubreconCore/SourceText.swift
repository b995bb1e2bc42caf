import Foundation

/// Text and numbers from a source answer made safe to keep: the one place hostile bytes are defused.
///
/// The rule, applied at the decode edge of every source (RevenueCat bodies, App Store bodies, decoded JWS payloads,
/// `verifyReceipt` bodies) and again, defensively, when a verdict or summary is encoded for a `jsonb` column:
/// - invalid UTF-8 becomes U+FFFD (`�`), as `String(decoding:as:)` does;
/// - NUL (U+0000), which PostgreSQL refuses in `text` and `jsonb`, becomes the six visible characters `\u0000`.
///
/// Other control characters are kept: JSON escapes them, `jsonb` accepts them and the report writers quote them.
/// Pure; never traps, whatever the input.
public enum SourceText {
    /// The visible text a NUL becomes.
    public static let nulEscape = "\\u0000"

    /// A JSON body with invalid UTF-8 repaired and every JSON-escaped NUL (`\u0000`) turned into the escaped
    /// backslash `\\u0000` (so it decodes to the visible text `\u0000`). Raw bytes outside strings are not touched:
    /// a raw NUL or control byte stays invalid JSON and the decoder rejects the body.
    public static func sanitizedJSON(_ body: Data) -> Data {
        // Valid UTF-8 comes back byte for byte; each invalid sequence becomes U+FFFD.
        let repaired = Array(String(decoding: body, as: UTF8.self).utf8)
        return Data(escapingJSONNul(repaired))
    }

    /// JSON text (as a JSON encoder wrote it) ready for a PostgreSQL `jsonb` parameter: NUL escapes made visible.
    public static func jsonbText(_ json: Data) -> String {
        String(decoding: escapingJSONNul(Array(json)), as: UTF8.self)
    }

    /// A string with NUL made visible (`\u0000`), for text that did not come through a JSON body.
    public static func sanitized(_ text: String) -> String {
        guard text.unicodeScalars.contains("\u{0}") else { return text }
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            if scalar == "\u{0}" { out.append(contentsOf: nulEscape.unicodeScalars) } else { out.append(scalar) }
        }
        return String(out)
    }

    /// Rewrites the JSON escape `\u0000` (any hex case) as `\\u0000`; every other escape is copied as it is.
    /// Outside strings JSON has no backslash, so tracking backslashes alone is exact.
    static func escapingJSONNul(_ bytes: [UInt8]) -> [UInt8] {
        let backslash = UInt8(ascii: "\\")
        guard bytes.contains(backslash) else { return bytes }
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count + 8)
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            guard byte == backslash, index + 1 < bytes.count else {
                out.append(byte)
                index += 1
                continue
            }
            let next = bytes[index + 1]
            if next == UInt8(ascii: "u"), index + 5 < bytes.count,
                bytes[(index + 2)...(index + 5)].allSatisfy({ $0 == UInt8(ascii: "0") })
            {
                out.append(contentsOf: Array("\\\\u0000".utf8))
                index += 6
            } else {
                out.append(byte)
                out.append(next)
                index += 2
            }
        }
        return out
    }
}

/// Numbers and instants from a source answer, converted without trapping: out of range is unknown (nil).
public enum SourceNumber {
    /// The latest instant a source may name: 2200-12-31T23:59:59.999Z, in Unix milliseconds (`StrictDate`).
    public static let latestMilliseconds: Int64 = StrictDate.latestMilliseconds

    /// An instant from Unix milliseconds; nil before 1970 or after 2200 (`StrictDate.epochMilliseconds`).
    public static func date(unixMilliseconds value: Int64) -> Date? { StrictDate.epochMilliseconds(value) }

    /// An instant from Unix milliseconds given as a JSON number (maybe fractional, huge, or not finite).
    public static func date(unixMilliseconds value: Double) -> Date? { StrictDate.epochMilliseconds(value) }

    /// An instant from Unix milliseconds written as decimal digits (`verifyReceipt`'s `*_ms` strings); nil for
    /// anything else (signs, spaces, fractions, overflow).
    public static func date(unixMilliseconds text: String) -> Date? { StrictDate.epochMilliseconds(text: text) }

    /// True when `date` lies in the range a source may name (1970 to 2200).
    public static func isPlausible(_ date: Date) -> Bool { StrictDate.isInRange(date) }

    /// `value` as an `Int64` when it is finite and within range (rounded toward zero); nil otherwise.
    public static func int64(_ value: Double) -> Int64? {
        guard value.isFinite else { return nil }
        let truncated = value.rounded(.towardZero)
        // 2^63 is exactly representable; every double below it converts.
        guard truncated >= -9_223_372_036_854_775_808.0, truncated < 9_223_372_036_854_775_808.0 else { return nil }
        return Int64(truncated)
    }

    /// `value` clamped into `Int64` (NaN is nil).
    public static func saturatingInt64(_ value: Double) -> Int64? {
        guard !value.isNaN else { return nil }
        if value >= 9_223_372_036_854_775_808.0 { return .max }
        if value < -9_223_372_036_854_775_808.0 { return .min }
        return Int64(value.rounded(.towardZero))
    }
}
