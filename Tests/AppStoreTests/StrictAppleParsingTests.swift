import Foundation
import SubreconCore
import Testing

@testable import AppStore

/// (CONTRACT "Hostile answers and bounded work") Apple's epoch-millisecond dates (JWS payloads, notification history, verifyReceipt) are
/// evidence only in 1970...2200; a negative price is unknown, never revenue.
@Suite("Apple strict parsing: dates beyond 2200 make the payload unusable; negative prices are unknown")
struct StrictAppleParsingTests {
    /// 3000-01-01T00:00:00Z and 2201-01-01T00:00:00Z in Unix milliseconds: both used to be believed.
    static let far = ["32503680000000", "7289654400000"]

    @Test("a transaction payload date after 2200 is a decoding error", arguments: far)
    func transactionDates(value: String) {
        for field in ["expiresDate", "purchaseDate", "revocationDate", "signedDate", "originalPurchaseDate"] {
            let body = Data(#"{"productId":"p","\#(field)":\#(value)}"#.utf8)
            #expect(throws: (any Error).self) { try AppStoreJSON.decode(JWSTransactionDecodedPayload.self, from: body) }
        }
    }

    @Test("a renewal payload date after 2200 is a decoding error", arguments: far)
    func renewalDates(value: String) {
        for field in ["gracePeriodExpiresDate", "renewalDate", "signedDate", "recentSubscriptionStartDate"] {
            let body = Data(#"{"productId":"p","\#(field)":\#(value)}"#.utf8)
            #expect(throws: (any Error).self) { try AppStoreJSON.decode(JWSRenewalInfoDecodedPayload.self, from: body) }
        }
    }

    @Test("the last millisecond of 2200 and a date given as a string are told apart")
    func edges() throws {
        let latest = try AppStoreJSON.decode(JWSTransactionDecodedPayload.self, from: Data(#"{"expiresDate":7289654399999}"#.utf8))
        #expect(latest.expiresDate == Date(timeIntervalSince1970: 7_289_654_399.999))
        let text = Data(#"{"expiresDate":"1772302931000"}"#.utf8)
        #expect(throws: (any Error).self) { try AppStoreJSON.decode(JWSTransactionDecodedPayload.self, from: text) }
    }

    @Test("a negative price or renewal price is unknown, never revenue")
    func negativePrices() {
        let transaction = JWSTransactionDecodedPayload(productId: "p", price: -3990, currency: "USD")
        var renewal = JWSRenewalInfoDecodedPayload(productId: "p")
        renewal.renewalPrice = -4990
        renewal.currency = "USD"
        let prices = AppleSubscriptionMapping.prices(transaction: transaction, renewal: renewal)
        #expect(prices.paid == nil && prices.renewal == nil)
        let positive = AppleSubscriptionMapping.prices(
            transaction: JWSTransactionDecodedPayload(productId: "p", price: 3990, currency: "USD"), renewal: nil)
        #expect(positive.paid?.amount == Decimal(string: "3.99"))
    }
}
