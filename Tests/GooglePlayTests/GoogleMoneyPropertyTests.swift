import Foundation
import GooglePlay
import PropertyBased
import SubreconCore
import Testing

/// Properties of Google's `Money` as the wire sends it (proto3 JSON: `units` an int64, usually as a string; `nanos` an
/// int32, as a number or, from some encoders, a string) read into an exact price (CONTRACT "Finance figures", "Hostile answers and bounded work").
@Suite("Google Money: properties over both encodings")
struct GoogleMoneyPropertyTests {
    static let checks = 1_000

    static func decode(_ json: String) throws -> GoogleMoney {
        try JSONDecoder().decode(GoogleMoney.self, from: Data(json.utf8))
    }

    @Test("units and nanos, each sent as a number or as a string, read to exactly units + nanos / 1e9")
    func bothEncodings() async throws {
        await propertyCheck(
            count: Self.checks, input: Gen.int64(in: 0...1_000_000_000), Gen.int64(in: 0...999_999_999), Gen.bool, Gen.bool
        ) { units, nanos, unitsAsString, nanosAsString in
            let u = unitsAsString ? "\"\(units)\"" : "\(units)"
            let n = nanosAsString ? "\"\(nanos)\"" : "\(nanos)"
            let money = try? Self.decode(#"{"currencyCode":"EUR","units":\#(u),"nanos":\#(n)}"#)
            let expected = Decimal(units) + Decimal(nanos) / Decimal(1_000_000_000)
            #expect(GooglePlayMapping.price(money)?.amount == Money(amount: expected, currency: "EUR").amount, "\(u) \(n)")
        }
    }

    @Test("a negative units or nanos, in either encoding, is an unknown price, never revenue")
    func negatives() async throws {
        await propertyCheck(
            count: Self.checks, input: Gen.int64(in: -1_000_000_000...1_000_000_000), Gen.int64(in: -999_999_999...999_999_999),
            Gen.bool
        ) { units, nanos, asStrings in
            let u = asStrings ? "\"\(units)\"" : "\(units)"
            let n = asStrings ? "\"\(nanos)\"" : "\(nanos)"
            let price = GooglePlayMapping.price(try? Self.decode(#"{"currencyCode":"USD","units":\#(u),"nanos":\#(n)}"#))
            if units < 0 || nanos < 0 {
                #expect(price == nil, "\(u) \(n) read as \(price.map { "\($0.amount)" } ?? "nil")")
            } else {
                #expect(price != nil, "\(u) \(n)")
            }
        }
    }

    @Test("nanos with bytes around the digits (a sign, a space, a fraction, a NUL) is an unknown price")
    func malformedNanos() async throws {
        let junk = [" 5", "5 ", "+5", "5.0", "5\u{0}", "0x5", "", "1e3", "５"]
        for text in junk {
            let money = try? Self.decode(
                #"{"currencyCode":"USD","units":"1","nanos":\#(String(data: try JSONEncoder().encode(text), encoding: .utf8)!)}"#)
            #expect(GooglePlayMapping.price(money) == nil, "nanos \(text.debugDescription)")
        }
    }
}
