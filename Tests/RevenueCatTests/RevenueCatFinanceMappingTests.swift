import Foundation
import SubreconCore
import Testing

@testable import RevenueCat

@Suite("RevenueCat prices, ownership and period type (CONTRACT 'Finance figures')")
struct RevenueCatFinanceMappingTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var json: String
        var paid: String?
        var renewal: String?
        var currency: String?
        var ownership: Ownership?
        var period: PeriodType?
        var testDescription: String { name }
    }

    static func subscription(period: String?, ownership: String?, price: String?) -> String {
        var fields = [#""store": "app_store""#, #""expires_date": "2026-03-10T00:00:00Z""#]
        if let period { fields.append(#""period_type": "\#(period)""#) }
        if let ownership { fields.append(#""ownership_type": "\#(ownership)""#) }
        if let price { fields.append(#""price": \#(price)"#) }
        return "{" + fields.joined(separator: ", ") + "}"
    }

    static let cases: [Case] = [
        Case(
            name: "normal period: the price is also the next renewal's",
            json: subscription(
                period: "normal", ownership: "PURCHASED",
                price: #"{"amount": 9.99, "currency": "USD"}"#), paid: "9.99", renewal: "9.99", currency: "USD", ownership: .purchased,
            period: .normal),
        Case(
            name: "trial: no stated next price",
            json: subscription(
                period: "trial", ownership: "PURCHASED",
                price: #"{"amount": 0, "currency": "USD"}"#), paid: "0", renewal: nil, currency: "USD", ownership: .purchased,
            period: .trial),
        Case(
            name: "intro: the intro price was paid, the next price is not stated",
            json: subscription(
                period: "intro", ownership: nil,
                price: #"{"amount": 0.99, "currency": "EUR"}"#), paid: "0.99", renewal: nil, currency: "EUR", ownership: nil, period: .intro
        ),
        Case(
            name: "family shared",
            json: subscription(
                period: "normal", ownership: "FAMILY_SHARED",
                price: #"{"amount": 4.99, "currency": "USD"}"#), paid: "4.99", renewal: "4.99", currency: "USD", ownership: .familyShared,
            period: .normal),
        Case(
            name: "missing currency: no price",
            json: subscription(
                period: "normal", ownership: "PURCHASED",
                price: #"{"amount": 9.99}"#), paid: nil, renewal: nil, currency: nil, ownership: .purchased, period: .normal),
        Case(
            name: "JPY without decimals",
            json: subscription(
                period: "normal", ownership: "PURCHASED",
                price: #"{"amount": 1200, "currency": "JPY"}"#), paid: "1200", renewal: "1200", currency: "JPY", ownership: .purchased,
            period: .normal),
        Case(
            name: "KWD with three decimals, from the JSON text exactly",
            json: subscription(
                period: "normal", ownership: nil,
                price: #"{"amount": 3.142, "currency": "KWD"}"#), paid: "3.142", renewal: "3.142", currency: "KWD", ownership: nil,
            period: .normal),
        Case(
            name: "a period type RevenueCat may add (prepaid): not stated",
            json: subscription(
                period: "prepaid", ownership: "SOMETHING",
                price: #"{"amount": 5, "currency": "USD"}"#), paid: "5", renewal: nil, currency: "USD", ownership: nil, period: nil),
    ]

    @Test("subscription price mapping", arguments: cases)
    func mapping(_ c: Case) throws {
        let response = try JSONDecoder().decode(
            RevenueCatSubscriberResponse.self, from: Data(Fixtures.subscriber(subscription: c.json).utf8))
        let facts = response.sourceFacts(status: 200).revenueCatPurchases
        try #require(facts.count == 1)
        let fact = facts[0]
        #expect(fact.price?.amount == c.paid.flatMap { Decimal(string: $0) })
        #expect(fact.renewalPrice?.amount == c.renewal.flatMap { Decimal(string: $0) })
        #expect((fact.price ?? fact.renewalPrice)?.currency == c.currency)
        #expect(fact.ownership == c.ownership)
        #expect(fact.periodType == c.period)
    }

    @Test("an amount with more significant digits than a Double holds decodes exactly from the JSON text")
    func decodedFromText() throws {
        let json = #"{"amount": 999999999999.999999, "currency": "USD"}"#
        let price = try JSONDecoder().decode(RevenueCatPrice.self, from: Data(json.utf8))
        #expect(Money(amount: price.amount, currency: "USD").amount == Decimal(string: "999999999999.999999"))
    }

    @Test("many decimal prices add up exactly (the JSON number is not taken through Double)")
    func exactSum() throws {
        var total = Decimal(0)
        for text in ["0.1", "0.2", "9.99", "0.7"] {
            let json = #"{"amount": \#(text), "currency": "USD"}"#
            let price = try JSONDecoder().decode(RevenueCatPrice.self, from: Data(json.utf8))
            total += Money(amount: price.amount, currency: "USD").amount
        }
        #expect(total == Decimal(string: "10.99"))
    }
}
