import Foundation
import Testing

@testable import RevenueCat

@Suite("RevenueCat bodies from a hostile peer: NUL, invalid UTF-8, dates out of range")
struct HostileBodyDecodingTests {
    @Test("a NUL in a product id or currency comes out as visible text, never as a NUL")
    func nulInText() throws {
        let body = Data(
            #"{"subscriber":{"entitlements":{"pro":{"expires_date":null,"product_identifier":"pro\u0000monthly"}},"subscriptions":{"pro\u0000monthly":{"store":"app_store","price":{"amount":9.99,"currency":"US\u0000D"}}}}}"#
                .utf8)
        let response = try RevenueCatSubscriberResponse.decode(body: body)
        #expect(response.subscriber.entitlements["pro"]?.productIdentifier == #"pro\u0000monthly"#)
        #expect(response.subscriber.subscriptions.keys.sorted() == [#"pro\u0000monthly"#])
        #expect(response.subscriber.subscriptions.values.first?.price?.currency == #"US\u0000D"#)
    }

    @Test("invalid UTF-8 bytes are repaired to U+FFFD and the answer still decodes")
    func invalidUTF8() throws {
        var body = Data(#"{"subscriber":{"entitlements":{"pro":{"product_identifier":"pro_"#.utf8)
        body.append(contentsOf: [0xFF, 0xC3, 0x28])
        body.append(contentsOf: Data(#""}}}}"#.utf8))
        let response = try RevenueCatSubscriberResponse.decode(body: body)
        #expect(response.subscriber.entitlements["pro"]?.productIdentifier == "pro_\u{FFFD}\u{FFFD}(")
    }

    @Test("a date beyond year 9999 is a decoding error for the body, not a date the store cannot hold")
    func datesOutOfRange() {
        for date in ["99999-01-01T00:00:00Z", "+275760-09-13T00:00:00Z", "1969-12-31T23:59:59Z"] {
            let body = Data(#"{"subscriber":{"entitlements":{"pro":{"product_identifier":"p","expires_date":"\#(date)"}}}}"#.utf8)
            #expect(throws: (any Error).self) { try RevenueCatSubscriberResponse.decode(body: body) }
        }
    }

    @Test(
        "a price that is not a believable amount is an unknown price; the subscription still decodes",
        arguments: ["1e400", "-1e300", "123456789012345678901234567890", "\"9.99\""])
    func implausiblePrice(amount: String) throws {
        let body = Data(
            #"{"subscriber":{"subscriptions":{"p":{"store":"app_store","expires_date":"2026-06-30T00:00:00Z","price":{"amount":\#(amount),"currency":"USD"}}}}}"#
                .utf8)
        let response = try RevenueCatSubscriberResponse.decode(body: body)
        let subscription = try #require(response.subscriber.subscriptions["p"])
        #expect(subscription.price == nil)
        #expect(subscription.expiresDate != nil)
    }

    @Test("an error body's message is sanitized like a subscriber body")
    func errorBody() {
        let body = Data(#"{"code":7225,"message":"bad\u0000key"}"#.utf8)
        #expect(RevenueCatErrorBody.decode(body: body)?.message == #"bad\u0000key"#)
        #expect(RevenueCatErrorBody.decode(body: Data("not json".utf8)) == nil)
    }
}
