import Foundation

/// base64url without padding (RFC 7515 §2), as JWT and JWS use it. Byte-wise (no `replacingOccurrences`, which
/// costs a Foundation string round trip per call and dominated JWS handling in profiles).
public enum Base64URL {
    public static func encode(_ data: some Sequence<UInt8>) -> String {
        let base64 = Data(data).base64EncodedData()
        var bytes: [UInt8] = []
        bytes.reserveCapacity(base64.count)
        for byte in base64 {
            switch byte {
            case UInt8(ascii: "+"): bytes.append(UInt8(ascii: "-"))
            case UInt8(ascii: "/"): bytes.append(UInt8(ascii: "_"))
            case UInt8(ascii: "="): continue
            default: bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    public static func decode(_ text: some StringProtocol) -> Data? {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count + 3)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "-"): bytes.append(UInt8(ascii: "+"))
            case UInt8(ascii: "_"): bytes.append(UInt8(ascii: "/"))
            case UInt8(ascii: "="): return nil
            default: bytes.append(byte)
            }
        }
        let remainder = bytes.count % 4
        if remainder == 1 { return nil }
        if remainder > 0 { bytes += repeatElement(UInt8(ascii: "="), count: 4 - remainder) }
        return Data(base64Encoded: Data(bytes))
    }
}
