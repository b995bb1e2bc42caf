import Foundation
import SubreconCore
import Testing

@testable import AppStore

@Suite("Apple status → PurchaseFact → judge()")
struct AppleSubscriptionMappingTests {
    static let asOf = Date(timeIntervalSince1970: 1_800_000_000)
    static let day: TimeInterval = 86_400

    struct Case: Sendable, CustomTestStringConvertible {
        var status: Int
        var expiresIn: TimeInterval
        var graceIn: TimeInterval?
        var revokedAgo: TimeInterval?
        var autoRenew: Int
        var billingRetry: Bool
        var entitled: Bool
        var judged: SubscriptionStatus
        var testDescription: String { "status \(status) → \(judged.rawValue)" }
    }

    static let cases: [Case] = [
        Case(status: 1, expiresIn: 20 * day, autoRenew: 1, billingRetry: false, entitled: true, judged: .active),
        Case(status: 1, expiresIn: 20 * day, autoRenew: 0, billingRetry: false, entitled: true, judged: .canceled),
        Case(status: 2, expiresIn: -3 * day, autoRenew: 0, billingRetry: false, entitled: false, judged: .expired),
        Case(status: 3, expiresIn: -3 * day, autoRenew: 1, billingRetry: true, entitled: false, judged: .expired),
        Case(status: 4, expiresIn: -1 * day, graceIn: 5 * day, autoRenew: 1, billingRetry: true, entitled: true, judged: .billingIssue),
        Case(status: 4, expiresIn: -10 * day, graceIn: -2 * day, autoRenew: 1, billingRetry: true, entitled: false, judged: .expired),
        Case(status: 5, expiresIn: 20 * day, revokedAgo: 2 * day, autoRenew: 0, billingRetry: false, entitled: false, judged: .refunded),
    ]

    @Test("each Apple status is judged as SPEC 5.3 says", arguments: cases)
    func statuses(_ testCase: Case) {
        let expires = Self.asOf.addingTimeInterval(testCase.expiresIn)
        var transaction = JWSTransactionDecodedPayload(
            originalTransactionId: "1000", transactionId: "2000", bundleId: "com.example", productId: "pro.monthly",
            purchaseDate: expires.addingTimeInterval(-30 * Self.day), expiresDate: expires,
            type: "Auto-Renewable Subscription", environment: "Production", price: 9_990, currency: "eur")
        transaction.revocationDate = testCase.revokedAgo.map { Self.asOf.addingTimeInterval(-$0) }
        var renewal = JWSRenewalInfoDecodedPayload(
            originalTransactionId: "1000", autoRenewStatus: testCase.autoRenew, productId: "pro.monthly",
            isInBillingRetryPeriod: testCase.billingRetry, environment: "Production")
        renewal.gracePeriodExpiresDate = testCase.graceIn.map { Self.asOf.addingTimeInterval($0) }

        let fact = AppleSubscriptionMapping.purchaseFact(status: testCase.status, transaction: transaction, renewal: renewal)
        #expect(fact.origin == .appStore)
        #expect(fact.store == .appStore)
        #expect(fact.isSandbox == false)
        #expect(fact.originalTransactionID == "1000")
        #expect(fact.storeTransactionID == "2000")
        #expect(fact.price == Money(amount: Decimal(string: "9.99")!, currency: "EUR"))
        #expect(fact.autoRenew == (testCase.autoRenew == 1))
        #expect((fact.billingIssueDetectedAt != nil) == (testCase.billingRetry || testCase.status == 3 || testCase.status == 4))
        let judgement = judge(fact, asOf: Self.asOf)
        #expect(judgement.entitled == testCase.entitled)
        #expect(judgement.status == testCase.judged)
    }

    @Test("sandbox environment marks the fact as sandbox; renewal price is the fallback price")
    func sandboxAndPrice() {
        let transaction = JWSTransactionDecodedPayload(
            originalTransactionId: "1", transactionId: "1", productId: "p", expiresDate: Self.asOf, environment: "Sandbox")
        var renewal = JWSRenewalInfoDecodedPayload(autoRenewStatus: 1, environment: "Sandbox")
        renewal.renewalPrice = 4_990
        renewal.currency = "USD"
        let fact = AppleSubscriptionMapping.purchaseFact(status: 1, transaction: transaction, renewal: renewal)
        #expect(fact.isSandbox)
        #expect(fact.price == Money(amount: Decimal(string: "4.99")!, currency: "USD"))
    }
}
