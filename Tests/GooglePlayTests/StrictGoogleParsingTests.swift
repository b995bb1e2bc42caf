import Foundation
import GooglePlay
import SubreconCore
import Testing

/// (CONTRACT "Hostile answers and bounded work") Google's RFC 3339 times are read whole (a time present but unusable fails the user
/// closed, never read as absent); `Money.nanos` is read as a JSON number or a string; a negative price is unknown.
@Suite("Google Play strict parsing: times, nanos as number or string, negative prices")
struct StrictGoogleParsingTests {
    static func money(_ json: String) throws -> GoogleMoney {
        try JSONDecoder().decode(GoogleMoney.self, from: Data(json.utf8))
    }

    @Test(
        "nanos as a JSON number or a string of digits: 4.99 either way",
        arguments: [
            #"{"currencyCode":"EUR","units":"4","nanos":990000000}"#, #"{"currencyCode":"EUR","units":"4","nanos":"990000000"}"#,
            #"{"currencyCode":"EUR","units":4,"nanos":"990000000"}"#,
        ])
    func nanosForms(json: String) throws {
        #expect(GooglePlayMapping.price(try Self.money(json))?.amount == Decimal(string: "4.99"))
    }

    @Test(
        "a negative amount, or nanos that cannot be read, is an unknown price, never revenue",
        arguments: [
            #"{"currencyCode":"USD","units":"-1","nanos":-750000000}"#, #"{"currencyCode":"USD","units":"-4"}"#,
            #"{"currencyCode":"USD","units":"0","nanos":-10000000}"#, #"{"currencyCode":"USD","units":"0","nanos":"-10000000"}"#,
            #"{"currencyCode":"USD","units":"4","nanos":"99.5"}"#, #"{"currencyCode":"USD","units":"4","nanos":"x"}"#,
            #"{"currencyCode":"USD","units":"4","nanos":{"a":1}}"#, #"{"currencyCode":"USD","units":"4","nanos":" 990000000"}"#,
            #"{"currencyCode":"USD","units":"4","nanos":"1000000000"}"#,
        ])
    func unknownPrices(json: String) throws {
        #expect(GooglePlayMapping.price(try Self.money(json)) == nil)
    }

    @Test("null nanos is no fraction")
    func nullNanos() throws {
        #expect(GooglePlayMapping.price(try Self.money(#"{"currencyCode":"USD","units":"4","nanos":null}"#))?.amount == 4)
    }

    static func answer(start: String?, expiry: String?) -> Data {
        let startField = start.map { #""startTime":\#($0),"# } ?? ""
        let expiryField = expiry.map { #""expiryTime":\#($0),"# } ?? ""
        return Data(
            #"""
            {\#(startField)"subscriptionState":"SUBSCRIPTION_STATE_ACTIVE",
             "lineItems":[{"productId":"premium_monthly",\#(expiryField)"autoRenewingPlan":{"autoRenewEnabled":true}}]}
            """#.utf8)
    }

    static let unusable = [
        #""2027-01-01T00:00:00Z\u0000""#, #""2027-01-01T00:00:00.123Z ""#, #""2999-01-01T00:00:00Z""#,
        #""2026-02-30T00:00:00Z""#, #""2026-06-01T24:00:00Z""#, #""2026-06-01T00:00:00""#, #""""#,
    ]

    @Test("an expiryTime present but unusable fails the answer (the user ends fetch_error)", arguments: unusable)
    func expiryTime(value: String) throws {
        let purchase = try GoogleJSON.subscription(Self.answer(start: #""2026-05-01T00:00:00Z""#, expiry: value))
        #expect(throws: GooglePlayMappingError.self) { try GooglePlayMapping.storeFacts(purchase, token: "t") }
    }

    @Test("a startTime present but unusable fails the answer", arguments: unusable)
    func startTime(value: String) throws {
        let purchase = try GoogleJSON.subscription(Self.answer(start: value, expiry: #""2026-07-01T00:00:00Z""#))
        #expect(throws: GooglePlayMappingError.self) { try GooglePlayMapping.storeFacts(purchase, token: "t") }
    }

    @Test("absent times stay unknown; whole times with nanoseconds and offsets are read")
    func absentAndValid() throws {
        let absent = try GooglePlayMapping.storeFacts(GoogleJSON.subscription(Self.answer(start: nil, expiry: nil)), token: "t")
        #expect(absent.first?.purchase.expiresDate == nil && absent.first?.purchase.purchaseDate == nil)
        let valid = try GooglePlayMapping.storeFacts(
            GoogleJSON.subscription(Self.answer(start: #""2026-05-01T02:00:00+02:00""#, expiry: #""2026-07-01T00:00:00.000000001Z""#)),
            token: "t")
        #expect(valid.first?.purchase.purchaseDate == Date(timeIntervalSince1970: 1_777_593_600))
        let expiry = try #require(valid.first?.purchase.expiresDate)
        #expect(abs(expiry.timeIntervalSince1970 - 1_782_864_000) < 0.000_01)
    }

    @Test("a voided purchase dated after 2200 states no refund")
    func voidedFarFuture() throws {
        let page = try GoogleJSON.voidedPurchases(
            Data(#"{"voidedPurchases":[{"purchaseToken":"t","orderId":"GPA.1","voidedTimeMillis":"32503680000000"}]}"#.utf8))
        #expect(page.voidedPurchases?.first?.refundedPurchase == nil)
    }
}
