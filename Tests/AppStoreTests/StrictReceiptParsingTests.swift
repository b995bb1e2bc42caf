import Foundation
import Testing

@testable import AppStore

/// (CONTRACT "Hostile answers and bounded work") A verifyReceipt `*_date_ms` present but not epoch milliseconds in 1970...2200 makes the
/// answer unusable (`ReceiptVerifier` fails the user closed), never a date read as absent.
@Suite("verifyReceipt strict dates")
struct StrictReceiptParsingTests {
    @Test(
        "a receipt date after 2200 or with trailing bytes is an unusable answer; absent and null dates are not",
        arguments: [
            ("32503680000000", "expires_date_ms"), ("1772302931000 ", "expires_date_ms"), ("x", "purchase_date_ms"),
            ("7289654400000", "cancellation_date_ms"),
        ])
    func receiptDates(value: String, field: String) throws {
        let body = Data(
            #"{"status":0,"latest_receipt_info":[{"product_id":"p","original_transaction_id":"1","\#(field)":"\#(value)","web":null}]}"#
                .utf8)
        let response = try #require(VerifyReceiptResponse.decode(body: body))
        #expect(ReceiptMapping.unusableDate(response) == field)
        let fine = Data(
            #"{"status":0,"latest_receipt_info":[{"product_id":"p","expires_date_ms":"1772302931000","cancellation_date_ms":null}]}"#.utf8)
        #expect(ReceiptMapping.unusableDate(try #require(VerifyReceiptResponse.decode(body: fine))) == nil)
    }
}
