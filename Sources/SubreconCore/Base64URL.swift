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

    /// Decodes base64url (also accepting the standard alphabet's `+` and `/`, as it always did); padding `=` is
    /// refused, trailing bits are ignored. Decodes the UTF-8 bytes in place (no translated copy, no per-byte
    /// protocol calls through `StringProtocol`, which an unspecialized generic loop paid).
    public static func decode(_ text: some StringProtocol) -> Data? {
        if let decoded = text.utf8.withContiguousStorageIfAvailable({ decode(bytes: $0) }) { return decoded }
        return Array(text.utf8).withUnsafeBufferPointer { decode(bytes: $0) }
    }

    static func decode(bytes: UnsafeBufferPointer<UInt8>) -> Data? {
        guard bytes.count % 4 != 1 else { return nil }
        var out = Data(count: bytes.count * 3 / 4)
        let written = out.withUnsafeMutableBytes { (buffer: UnsafeMutableRawBufferPointer) -> Int? in
            var accumulator: UInt32 = 0
            var bits = 0
            var index = 0
            for byte in bytes {
                let value = sextets[Int(byte)]
                guard value != invalid else { return nil }
                accumulator = (accumulator << 6) | UInt32(value)
                bits += 6
                if bits >= 8 {
                    bits -= 8
                    buffer[index] = UInt8(truncatingIfNeeded: accumulator >> UInt32(bits))
                    index += 1
                }
            }
            return index
        }
        guard let written else { return nil }
        out.count = written
        return out
    }

    private static let invalid: UInt8 = 0xFF

    /// The 6-bit value of each byte in either alphabet, `invalid` for any other byte.
    private static let sextets: [UInt8] = {
        var table = [UInt8](repeating: invalid, count: 256)
        for (value, byte) in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789".utf8.enumerated() {
            table[Int(byte)] = UInt8(value)
        }
        let extra: [(byte: UInt8, value: UInt8)] = [
            (UInt8(ascii: "+"), 62), (UInt8(ascii: "-"), 62), (UInt8(ascii: "/"), 63), (UInt8(ascii: "_"), 63),
        ]
        for (byte, value) in extra { table[Int(byte)] = value }
        return table
    }()
}
