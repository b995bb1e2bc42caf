// The strict parsers (CONTRACT "Hostile answers and bounded work") under the fuzzer: 'D' and 'M' of the table in FuzzDecoders.swift.
import Foundation
import SubreconCore

/// Text through `StrictDate`: whatever is read lies in 1970...2200, and a value read is whole (one byte more and it
/// is unusable).
func strictDate(_ body: Data) {
    let text = String(decoding: body, as: UTF8.self)
    if let date = StrictDate.parse(text) {
        check(date, "strict date")
        for suffix in ["\u{0}", "Z", " ", "0"] { precondition(StrictDate.parse(text + suffix) == nil, "a trailing byte accepted") }
    }
    check(StrictDate.epochMilliseconds(text: text), "strict ms text")
    if let value = Double(text) {
        check(StrictDate.epochMilliseconds(value), "strict ms number")
        check(StrictDate.epochSeconds(value), "strict seconds number")
    }
    if let value = Int64(text) {
        check(StrictDate.epochMilliseconds(value), "strict ms integer")
        check(StrictDate.epochSeconds(value), "strict seconds integer")
    }
}

/// A Google `Money` (units, nanos as a number or a string): a price read is never negative.
func googleMoney(_ body: Data) {
    guard let money = try? JSONDecoder().decode(GoogleMoney.self, from: SourceText.sanitizedJSON(body)) else { return }
    check(money.currencyCode, "google currency")
    if let price = GooglePlayMapping.price(money) {
        precondition(!price.amount.isNaN && price.amount >= 0, "negative Google price kept")
    }
}
