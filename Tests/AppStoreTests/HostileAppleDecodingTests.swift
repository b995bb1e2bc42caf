import Foundation
import SubreconCore
import Testing

@testable import AppStore

@Suite("Apple bodies, JWS payloads and receipts from a hostile peer: numbers out of range, NUL, invalid UTF-8")
struct HostileAppleDecodingTests {
    @Test(
        "payload dates outside 1970...9999 (huge, negative, 1e300) are a decoding error, never a trap downstream",
        arguments: ["1e300", "-1", "253402300800000", "1e19", "-9223372036854775808"])
    func transactionDates(value: String) {
        let body = Data(#"{"productId":"p","expiresDate":\#(value)}"#.utf8)
        #expect(throws: (any Error).self) { try AppStoreJSON.decode(JWSTransactionDecodedPayload.self, from: body) }
    }

    @Test("a plausible date and a fractional millisecond decode")
    func plausibleDates() throws {
        let body = Data(#"{"productId":"p","expiresDate":1772302931000.5,"purchaseDate":0}"#.utf8)
        let payload = try AppStoreJSON.decode(JWSTransactionDecodedPayload.self, from: body)
        #expect(payload.expiresDate == Date(timeIntervalSince1970: 1_772_302_931.0005))
        #expect(payload.purchaseDate == Date(timeIntervalSince1970: 0))
    }

    @Test("NUL and invalid UTF-8 in a payload come out as visible text and U+FFFD")
    func hostileText() throws {
        var body = Data(#"{"productId":"pro\u0000","bundleId":"com."#.utf8)
        body.append(0xFF)
        body.append(contentsOf: Data(#""}"#.utf8))
        let payload = try AppStoreJSON.decode(JWSTransactionDecodedPayload.self, from: body)
        #expect(payload.productId == #"pro\u0000"#)
        #expect(payload.bundleId == "com.\u{FFFD}")
        let huge = try? AppStoreJSON.decode(AppStoreErrorPayload.self, from: Data(#"{"errorCode":1e19,"errorMessage":"x"}"#.utf8))
        #expect(huge?.errorCode == nil, "an error code beyond Int64 is no error code")
    }

    @Test(
        "receipt millisecond strings: overflow, signs and out-of-range values are unknown",
        arguments: [
            ("1772302931000", true), ("99999999999999999999", false), ("-9223372036854775808", false),
            ("9223372036854775807", false), ("1e19", false), (" 1772302931000", false), ("", false),
        ])
    func receiptMilliseconds(text: String, valid: Bool) {
        #expect((ReceiptMapping.date(text) != nil) == valid)
    }

    @Test("a receipt with hostile numbers and NUL maps without trapping")
    func hostileReceipt() throws {
        let body = Data(
            #"""
            {"status":0,"latest_receipt_info":[{"product_id":"pro\u0000","original_transaction_id":"1","transaction_id":"2",
            "purchase_date_ms":"-9223372036854775808","expires_date_ms":"99999999999999999999","cancellation_date_ms":1e19}]}
            """#.utf8)
        let response = try #require(VerifyReceiptResponse.decode(body: body))
        let answer = ReceiptMapping.answer(response, environment: .production, productID: nil)
        #expect(answer.purchases.count == 1)
        #expect(answer.purchases.first?.productID == #"pro\u0000"#)
        #expect(answer.purchases.first?.purchaseDate == nil)
    }
}
