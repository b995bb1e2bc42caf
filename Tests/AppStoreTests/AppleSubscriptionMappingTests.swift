import Foundation
import SubreconCore
import Testing

@testable import AppStore

@Suite("Apple status → PurchaseFact → Decision.judge()")
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

    @Test("each Apple status is judged as CONTRACT 'Sources and the decision' says", arguments: cases)
    func statuses(_ testCase: Case) throws {
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

        let fact = try AppleSubscriptionMapping.purchaseFact(status: testCase.status, transaction: transaction, renewal: renewal)
        #expect(fact.origin == .appStore)
        #expect(fact.store == .appStore)
        #expect(fact.isSandbox == false)
        #expect(fact.originalTransactionID == "1000")
        #expect(fact.storeTransactionID == "2000")
        #expect(fact.price == Money(amount: Decimal(string: "9.99")!, currency: "EUR"))
        #expect(fact.autoRenew == (testCase.autoRenew == 1))
        #expect((fact.billingIssueDetectedAt != nil) == (testCase.billingRetry || testCase.status == 3 || testCase.status == 4))
        #expect(fact.storeState == StoreState(appleStatus: testCase.status))
        let judgement = try #require(Decision.judge(fact, asOf: Self.asOf).known)
        #expect(judgement.entitled == testCase.entitled)
        #expect(judgement.status == testCase.judged)
    }

    @Test("sandbox environment marks the fact as sandbox; the renewal price is the renewal price, never the paid price")
    func sandboxAndPrice() throws {
        let transaction = JWSTransactionDecodedPayload(
            originalTransactionId: "1", transactionId: "1", productId: "p", expiresDate: Self.asOf, environment: "Sandbox")
        var renewal = JWSRenewalInfoDecodedPayload(autoRenewStatus: 1, environment: "Sandbox")
        renewal.renewalPrice = 4_990
        renewal.currency = "USD"
        let fact = try AppleSubscriptionMapping.purchaseFact(status: 1, transaction: transaction, renewal: renewal)
        #expect(fact.isSandbox == true)
        #expect(fact.price == nil)
        #expect(fact.renewalPrice == Money(amount: Decimal(string: "4.99")!, currency: "USD"))
    }

    static func transaction(
        status: Int, expiresIn: TimeInterval?, signedAgo: TimeInterval = 0, type: String = "Auto-Renewable Subscription",
        environment: String? = "Production", revokedAgo: TimeInterval? = nil
    ) -> JWSTransactionDecodedPayload {
        var transaction = JWSTransactionDecodedPayload(
            originalTransactionId: "1000", transactionId: "2000", bundleId: "com.example", productId: "pro.monthly",
            purchaseDate: asOf.addingTimeInterval(-40 * day), expiresDate: expiresIn.map { asOf.addingTimeInterval($0) },
            type: type, signedDate: asOf.addingTimeInterval(-signedAgo), environment: environment)
        transaction.revocationDate = revokedAgo.map { asOf.addingTimeInterval(-$0) }
        return transaction
    }

    @Test("status 4 without signedRenewalInfo still entitles (billing grace)")
    func graceWithoutRenewalInfo() throws {
        let fact = try AppleSubscriptionMapping.purchaseFact(
            status: 4, transaction: Self.transaction(status: 4, expiresIn: -2 * Self.day), renewal: nil)
        let judgement = try #require(Decision.judge(fact, asOf: Self.asOf).known)
        #expect(judgement.entitled && judgement.status == .billingIssue)
        #expect(fact.autoRenew == nil, "no renewal info: auto-renew unknown")
    }

    @Test("status 5 without a revocation date is revoked")
    func revokedWithoutDate() throws {
        let fact = try AppleSubscriptionMapping.purchaseFact(
            status: 5, transaction: Self.transaction(status: 5, expiresIn: 20 * Self.day), renewal: nil)
        let judgement = try #require(Decision.judge(fact, asOf: Self.asOf).known)
        #expect(!judgement.entitled && judgement.status == .refunded)
    }

    struct Contradiction: Sendable {
        var status: Int
        var expiresInDays: Double
        var graceInDays: Double?
    }

    static let contradictionCases: [Contradiction] = [
        Contradiction(status: 1, expiresInDays: -3, graceInDays: nil),
        Contradiction(status: 2, expiresInDays: 10, graceInDays: nil),
        Contradiction(status: 3, expiresInDays: 10, graceInDays: nil),
        Contradiction(status: 4, expiresInDays: -3, graceInDays: -1),
    ]

    @Test("dates that contradict the status are not believed", arguments: contradictionCases)
    func contradictions(_ c: Contradiction) {
        let status = c.status
        let expiresIn = c.expiresInDays * Self.day
        let graceIn = c.graceInDays.map { $0 * Self.day }
        var renewal = JWSRenewalInfoDecodedPayload(autoRenewStatus: 1, environment: "Production")
        renewal.gracePeriodExpiresDate = graceIn.map { Self.asOf.addingTimeInterval($0) }
        #expect(throws: AppleStatusContradiction.self) {
            try AppleSubscriptionMapping.purchaseFact(
                status: status, transaction: Self.transaction(status: status, expiresIn: expiresIn), renewal: renewal)
        }
    }

    @Test("a status Apple does not document is not believed")
    func unknownStatus() {
        #expect(throws: AppleStatusContradiction.self) {
            try AppleSubscriptionMapping.purchaseFact(
                status: 9, transaction: Self.transaction(status: 9, expiresIn: 5 * Self.day), renewal: nil)
        }
    }

    @Test("the transaction type decides the kind; a missing environment is unknown")
    func kinds() throws {
        let lifetime = try AppleSubscriptionMapping.purchaseFact(
            status: nil, transaction: Self.transaction(status: 1, expiresIn: nil, type: "Non-Consumable", environment: nil), renewal: nil)
        #expect(lifetime.kind == .nonExpiring && lifetime.isSandbox == nil)
        let pass = try AppleSubscriptionMapping.purchaseFact(
            status: nil, transaction: Self.transaction(status: 1, expiresIn: nil, type: "Non-Renewing Subscription"), renewal: nil)
        #expect(pass.kind == .nonRenewing)
        #expect(Decision.judge(pass, asOf: Self.asOf).known == nil, "a pass without an expiry is unknown")
    }
}

@Suite("Apple prices, ownership and offers (CONTRACT 'Finance figures')")
struct AppleFinanceMappingTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var price: Int64?
        var currency: String?
        var renewalPrice: Int64?
        var renewalCurrency: String?
        var ownership: String?
        var offerType: Int?
        var offerDiscountType: String?
        var paid: String?
        var renewal: String?
        var expectedOwnership: Ownership?
        var period: PeriodType
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(
            name: "normal: paid and renewal each from its own field", price: 9_990, currency: "USD", renewalPrice: 12_990,
            renewalCurrency: "USD", ownership: "PURCHASED", paid: "9.99", renewal: "12.99", expectedOwnership: .purchased, period: .normal),
        Case(
            name: "introductory offer: the offer price was paid, the renewal price is next", price: 990, currency: "USD",
            renewalPrice: 9_990, renewalCurrency: "USD", ownership: "PURCHASED", offerType: 1, offerDiscountType: "PAY_AS_YOU_GO",
            paid: "0.99", renewal: "9.99", expectedOwnership: .purchased, period: .intro),
        Case(
            name: "free trial", price: 0, currency: "USD", renewalPrice: 9_990, renewalCurrency: "USD", offerType: 1,
            offerDiscountType: "FREE_TRIAL", paid: "0", renewal: "9.99", period: .trial),
        Case(
            name: "family shared", price: 9_990, currency: "USD", renewalPrice: 9_990, renewalCurrency: "USD", ownership: "FAMILY_SHARED",
            paid: "9.99", renewal: "9.99", expectedOwnership: .familyShared, period: .normal),
        Case(
            name: "missing currency: no price", price: 9_990, currency: nil, renewalPrice: 9_990, renewalCurrency: nil,
            paid: nil, renewal: nil, period: .normal),
        Case(
            name: "no renewal info price: renewal unknown, paid kept apart", price: 9_990, currency: "EUR",
            paid: "9.99", renewal: nil, period: .normal),
        Case(
            name: "JPY milliunits", price: 1_200_000, currency: "JPY", renewalPrice: 1_200_000, renewalCurrency: "JPY",
            paid: "1200", renewal: "1200", period: .normal),
        Case(
            name: "KWD milliunits", price: 3_500, currency: "KWD", renewalPrice: 3_500, renewalCurrency: "KWD",
            paid: "3.5", renewal: "3.5", period: .normal),
        Case(
            name: "zero price stated", price: 0, currency: "USD", renewalPrice: 0, renewalCurrency: "USD", paid: "0", renewal: "0",
            period: .normal),
    ]

    @Test("transaction price vs renewal price", arguments: cases)
    func mapping(_ c: Case) throws {
        var transaction = JWSTransactionDecodedPayload(
            originalTransactionId: "1", transactionId: "1", productId: "p", expiresDate: Date(timeIntervalSince1970: 2_000_000_000),
            environment: "Production", price: c.price, currency: c.currency)
        transaction.inAppOwnershipType = c.ownership
        transaction.offerType = c.offerType
        transaction.offerDiscountType = c.offerDiscountType
        var renewal = JWSRenewalInfoDecodedPayload(autoRenewStatus: 1, environment: "Production")
        renewal.renewalPrice = c.renewalPrice
        renewal.currency = c.renewalCurrency
        let fact = try AppleSubscriptionMapping.purchaseFact(status: nil, transaction: transaction, renewal: renewal)
        #expect(fact.price?.amount == c.paid.flatMap { Decimal(string: $0) })
        #expect(fact.renewalPrice?.amount == c.renewal.flatMap { Decimal(string: $0) })
        #expect(fact.ownership == c.expectedOwnership)
        #expect(fact.periodType == c.period)
    }
}
