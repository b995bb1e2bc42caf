import Foundation
import SubreconCore
import SubreconPorts

/// JSON text written field by field, in the order given, for `jsonb` parameters (PostgreSQL normalizes the order).
/// Strings are escaped as RFC 8259 requires (`"`, `\` and control characters); NUL is written as the visible text
/// `\u0000` (`SourceText.jsonbText`), since `jsonb` refuses the escape. Cheaper than `JSONSerialization` over
/// `[String: Any]` with sorted keys, which the apply phase paid per audit row.
struct JSONText {
    private(set) var bytes: [UInt8] = []
    private var first = true

    init(capacity: Int = 256) { bytes.reserveCapacity(capacity) }

    /// A JSON object of the fields `body` adds.
    static func object(_ body: (inout JSONText) -> Void) -> String {
        var text = JSONText()
        text.bytes.append(UInt8(ascii: "{"))
        body(&text)
        text.bytes.append(UInt8(ascii: "}"))
        return String(decoding: text.bytes, as: UTF8.self)
    }

    /// A JSON array of strings.
    static func array(_ strings: [String]) -> String {
        var text = JSONText(capacity: 16 * strings.count + 2)
        text.bytes.append(UInt8(ascii: "["))
        for (index, string) in strings.enumerated() {
            if index > 0 { text.bytes.append(UInt8(ascii: ",")) }
            text.string(string)
        }
        text.bytes.append(UInt8(ascii: "]"))
        return String(decoding: text.bytes, as: UTF8.self)
    }

    mutating func field(_ key: String, _ value: String?) {
        self.key(key)
        if let value { string(value) } else { bytes += Self.null }
    }

    mutating func field(_ key: String, _ value: Int64?) {
        self.key(key)
        bytes += value.map { Array(String($0).utf8) } ?? Self.null
    }

    mutating func field(_ key: String, _ value: Int?) { field(key, value.map(Int64.init)) }

    mutating func field(_ key: String, _ value: Bool?) {
        self.key(key)
        bytes += value.map { Array(($0 ? "true" : "false").utf8) } ?? Self.null
    }

    /// An instant as ISO 8601 UTC text (`ISO8601.string`), or null.
    mutating func field(_ key: String, _ value: Date?) { field(key, value.map(ISO8601.string)) }

    private static let null = Array("null".utf8)
    private static let hex = Array("0123456789abcdef".utf8)

    private mutating func key(_ key: String) {
        if !first { bytes.append(UInt8(ascii: ",")) }
        first = false
        string(key)
        bytes.append(UInt8(ascii: ":"))
    }

    private mutating func string(_ value: String) {
        bytes.append(UInt8(ascii: "\""))
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "\""): bytes += [UInt8(ascii: "\\"), UInt8(ascii: "\"")]
            case UInt8(ascii: "\\"): bytes += [UInt8(ascii: "\\"), UInt8(ascii: "\\")]
            case 0: bytes += Array(#"\\u0000"#.utf8)
            case 0x0A: bytes += [UInt8(ascii: "\\"), UInt8(ascii: "n")]
            case 0x0D: bytes += [UInt8(ascii: "\\"), UInt8(ascii: "r")]
            case 0x09: bytes += [UInt8(ascii: "\\"), UInt8(ascii: "t")]
            case 0x01..<0x20:
                bytes += Array(#"\u00"#.utf8)
                bytes += [Self.hex[Int(byte >> 4)], Self.hex[Int(byte & 0x0F)]]
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }
}
