import Foundation
import Testing

@testable import AppStore

@Suite("App Store wire models")
struct ModelDecodingTests {
    @Test(
        "error bodies decode, unknown codes kept raw",
        arguments: [
            ("apiException.json", Int64(5_000_000), "An unknown error occurred."),
            ("apiTooManyRequestsException.json", Int64(4_290_000), "Rate limit exceeded."),
            ("apiUnknownError.json", Int64(9_990_000), nil),
            ("transactionIdNotFoundError.json", Int64(4_040_010), "Transaction id not found."),
        ] as [(String, Int64, String?)])
    func errorBodies(file: String, code: Int64, message: String?) throws {
        let payload = try JSONDecoder().decode(AppStoreErrorPayload.self, from: try Vectors.model(file))
        #expect(payload.errorCode == code)
        if let message { #expect(payload.errorMessage == message) }
        #expect(AppStoreErrorPayload.retryableCodes.contains(code) == false)
    }

    @Test("getAllSubscriptionStatusesResponse.json decodes")
    func statusResponse() throws {
        let response = try JSONDecoder.appStore.decode(
            StatusResponse.self, from: try Vectors.model("getAllSubscriptionStatusesResponse.json"))
        #expect(response.environment == "LocalTesting")
        #expect(response.bundleId == "com.example")
        #expect(response.appAppleId == 5_454_545)
        let groups = try #require(response.data)
        #expect(groups.map(\.subscriptionGroupIdentifier) == ["sub_group_one", "sub_group_two"])
        let items = groups.flatMap { $0.lastTransactions ?? [] }
        #expect(items.map(\.status) == [1, 5, 2])
        #expect(items.map(\.originalTransactionId) == ["3749183", "5314314134", "3413453"])
    }

    @Test("the full signed transaction and renewal payloads decode with millisecond dates")
    func fullPayloads() throws {
        let transaction = try JSONDecoder.appStore.decode(
            JWSTransactionDecodedPayload.self, from: try Vectors.model("signedTransaction.json"))
        #expect(transaction.originalTransactionId == "12345")
        #expect(transaction.transactionId == "23456")
        #expect(transaction.expiresDate == Date(timeIntervalSince1970: 1_698_149_000))
        #expect(transaction.revocationDate == Date(timeIntervalSince1970: 1_698_148_950))
        #expect(transaction.price == 10_990)
        #expect(transaction.currency == "USD")
        let renewal = try JSONDecoder.appStore.decode(JWSRenewalInfoDecodedPayload.self, from: try Vectors.model("signedRenewalInfo.json"))
        #expect(renewal.autoRenewStatus == 1)
        #expect(renewal.isInBillingRetryPeriod == true)
        #expect(renewal.gracePeriodExpiresDate == Date(timeIntervalSince1970: 1_698_148_900))
        #expect(renewal.renewalPrice == 9_990)
    }
}
