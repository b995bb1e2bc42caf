import Foundation
import PropertyBased
import SubreconCore
import Testing

/// `Base64URL.decode` decodes bytes in place now; the oracle is the former decoder (translate to the standard
/// alphabet, pad, Foundation), kept here: both must agree on every input, valid or not.
@Suite("Base64URL: properties over generated text")
struct Base64URLPropertyTests {
    static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
    static let hostile: [Character] = ["+", "/", "=", " ", "\n", ".", "\u{0}", "é", "A", "_", "-"]

    static func former(_ text: some StringProtocol) -> Data? {
        var bytes: [UInt8] = []
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

    @Test("any bytes round-trip through encode and decode")
    func roundTrip() async {
        await propertyCheck(count: 2_000, input: Gen.uint8().array(of: 0...300)) { bytes in
            #expect(Base64URL.decode(Base64URL.encode(bytes)) == Data(bytes))
        }
    }

    @Test("any text of the alphabet decodes as the former decoder did (length, trailing bits)")
    func alphabetAgrees() async {
        await propertyCheck(count: 2_000, input: Gen.element(of: Self.alphabet).array(of: 0...40)) { characters in
            let text = String(characters.compactMap { $0 })
            #expect(Base64URL.decode(text) == Self.former(text), "\(text)")
            #expect(Base64URL.decode(text[...]) == Self.former(text[...]), "\(text)")
        }
    }

    @Test("text with padding, the standard alphabet, spaces, NUL or non-ASCII is judged as the former decoder did")
    func hostileAgrees() async {
        await propertyCheck(
            count: 2_000, input: Gen.element(of: Self.alphabet).array(of: 0...20), Gen.element(of: Self.hostile).array(of: 1...3),
            Gen.int(in: 0...20)
        ) { characters, inserted, position in
            var text = characters.compactMap { $0 }
            text.insert(contentsOf: inserted.compactMap { $0 }, at: min(position, text.count))
            let string = String(text)
            #expect(Base64URL.decode(string) == Self.former(string), "\(string.debugDescription)")
        }
    }
}
