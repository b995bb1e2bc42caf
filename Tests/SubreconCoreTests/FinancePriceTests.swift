import Foundation
import SubreconCore
import Testing

@Suite("Which price each finance figure carries (CONTRACT 'Finance figures')")
struct FinancePriceTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var paid: Money?
        var renewal: Money?
        var ownership: Ownership?
        var period: PeriodType?
        var category: FinanceCategory
        var amount: String?
        var currency: String?
        var basis: PriceBasis
        var testDescription: String { name }
    }

    static func usd(_ text: String) -> Money { Money(amount: Decimal(string: text)!, currency: "USD") }

    static let cases: [Case] = [
        Case(
            name: "refund: what was paid", paid: usd("9.99"), renewal: usd("12.99"), category: .refund,
            amount: "9.99", currency: "USD", basis: .paid),
        Case(
            name: "refund of an introductory period: the intro price that was charged", paid: usd("0.99"),
            renewal: usd("9.99"), period: .intro, category: .refund, amount: "0.99", currency: "USD", basis: .paid),
        Case(
            name: "at risk after an introductory offer: the next renewal's price", paid: usd("0.99"), renewal: usd("9.99"),
            period: .intro, category: .billingIssueAtRisk, amount: "9.99", currency: "USD", basis: .renewal),
        Case(
            name: "restored: the next renewal's price", paid: usd("4.99"), renewal: usd("9.99"), category: .restored,
            amount: "9.99", currency: "USD", basis: .renewal),
        Case(
            name: "at risk without a stated renewal price: unknown, never the paid price", paid: usd("0.99"),
            period: .intro, category: .billingIssueAtRisk, amount: nil, currency: nil, basis: .unknown),
        Case(
            name: "refund without a stated paid price: unknown, never the renewal price", renewal: usd("9.99"),
            category: .refund, amount: nil, currency: nil, basis: .unknown),
        Case(
            name: "family shared refund: 0, its own basis", paid: usd("9.99"), renewal: usd("9.99"), ownership: .familyShared,
            category: .refund, amount: "0", currency: "USD", basis: .familyShared),
        Case(
            name: "family shared at risk: 0", paid: usd("9.99"), renewal: usd("9.99"), ownership: .familyShared,
            category: .billingIssueAtRisk, amount: "0", currency: "USD", basis: .familyShared),
        Case(
            name: "bought (not shared) counts as money", paid: usd("9.99"), ownership: .purchased, category: .refund,
            amount: "9.99", currency: "USD", basis: .paid),
        Case(
            name: "trial at risk without a renewal price: 0 trial", paid: usd("0"), period: .trial,
            category: .billingIssueAtRisk, amount: "0", currency: "USD", basis: .trial),
        Case(
            name: "trial refund: 0 trial", paid: usd("0"), period: .trial, category: .refund, amount: "0", currency: "USD",
            basis: .trial),
        Case(
            name: "trial without any price or currency: 0 trial, currency unknown", period: .trial, category: .restored,
            amount: "0", currency: nil, basis: .trial),
        Case(
            name: "trial whose store states the renewal price: the renewal price", renewal: usd("9.99"), period: .trial,
            category: .billingIssueAtRisk, amount: "9.99", currency: "USD", basis: .renewal),
        Case(
            name: "zero price stated as paid: 0 paid, not unknown", paid: usd("0"), category: .refund, amount: "0",
            currency: "USD", basis: .paid),
        Case(name: "nothing stated: unknown", category: .restored, amount: nil, currency: nil, basis: .unknown),
    ]

    @Test("price choice", arguments: cases)
    func choice(_ c: Case) {
        let purchase = PurchaseFact(
            productID: "p", store: .appStore, isSandbox: false, price: c.paid, renewalPrice: c.renewal, ownership: c.ownership,
            periodType: c.period, line: nil, buyer: .unstated)
        let price = FinancePrice.of(purchase, for: c.category)
        #expect(price.basis == c.basis)
        #expect(price.amount == c.amount.flatMap { Decimal(string: $0) })
        #expect(price.currency == c.currency)
    }

    @Test("no purchase: unknown")
    func noPurchase() {
        #expect(FinancePrice.of(nil, for: .refund) == .unknown)
    }

    @Test(
        "exact amounts from integers by exponent (JPY 0, USD 2, Apple milliunits / KWD 3)",
        arguments: [
            (Int64(1200), 0, "1200"), (999, 2, "9.99"), (9_990, 3, "9.99"), (3_500, 3, "3.5"), (1, 3, "0.001"),
            (-250, 2, "-2.5"), (0, 3, "0"),
        ])
    func exactUnits(units: Int64, exponent: Int, text: String) {
        let money = Money(units: units, exponent: exponent, currency: "xxx")
        #expect(money.amount == Decimal(string: text))
        #expect(money.currency == "XXX")
    }

    @Test("sums of exact amounts stay exact (no binary floating point)")
    func exactSum() {
        var total = Decimal(0)
        for _ in 0..<10 { total += Money(units: 10, exponent: 2, currency: "USD").amount }
        #expect(total == Decimal(1))
    }

    @Test("categories of a row: refund, billing issue, restored")
    func categories() {
        #expect(FinanceCategory.of(dbTier: 1, truthTier: 0, truthStatus: "refunded", action: "downgrade") == [.refund])
        #expect(FinanceCategory.of(dbTier: 0, truthTier: 0, truthStatus: "refunded", action: "none") == [])
        #expect(FinanceCategory.of(dbTier: 1, truthTier: 1, truthStatus: "billing_issue", action: "status_change") == [.billingIssueAtRisk])
        #expect(
            FinanceCategory.of(dbTier: 0, truthTier: 1, truthStatus: "billing_issue", action: "restore") == [
                .billingIssueAtRisk, .restored,
            ])
        #expect(FinanceCategory.of(dbTier: 0, truthTier: 1, truthStatus: "active", action: "restore") == [.restored])
        #expect(FinanceCategory.of(dbTier: 1, truthTier: nil, truthStatus: nil, action: "skipped") == [])
    }
}

@Suite("Verdicts carry their figure's price (CONTRACT 'Finance figures')")
struct VerdictFinancePriceTests {
    static func purchase(
        expires: Double, refunded: Double? = nil, billingIssue: Double? = nil, grace: Double? = nil, ownership: Ownership? = nil,
        period: PeriodType? = nil, paid: Money?, renewal: Money?
    ) -> PurchaseFact {
        PurchaseFact(
            productID: "premium_monthly", store: .appStore, isSandbox: false, purchaseDate: days(-30), expiresDate: days(expires),
            gracePeriodExpiresDate: grace.map(days), refundedAt: refunded.map(days), billingIssueDetectedAt: billingIssue.map(days),
            autoRenew: true, storeTransactionID: "t1", price: paid, renewalPrice: renewal, ownership: ownership, periodType: period,
            line: nil, buyer: .unstated)
    }

    static let eur = Money(amount: Decimal(string: "4.99")!, currency: "EUR")
    static let eurRenewal = Money(amount: Decimal(string: "9.99")!, currency: "EUR")

    @Test("a family member's refund revokes the tier and is worth 0 (family_shared)")
    func familyRefund() {
        let verdict = Decision.decide(
            row: row(tier: 1, status: "active", end: 5),
            facts: SourceFacts(
                revenueCatKnowsSubscriber: true,
                revenueCatPurchases: [Self.purchase(expires: 5, refunded: -1, ownership: .familyShared, paid: Self.eur, renewal: Self.eur)]),
            context: context)
        #expect(verdict.truth?.tier == 0)
        #expect(verdict.truth?.status == .refunded)
        #expect(verdict.financePrice == FinancePrice(amount: 0, currency: "EUR", basis: .familyShared))
    }

    @Test("a refund is worth what was paid for the refunded period")
    func paidRefund() {
        let verdict = Decision.decide(
            row: row(tier: 1, status: "active", end: 5),
            facts: SourceFacts(
                revenueCatKnowsSubscriber: true,
                revenueCatPurchases: [Self.purchase(expires: 5, refunded: -1, period: .intro, paid: Self.eur, renewal: nil)]),
            context: context)
        #expect(verdict.financePrice == FinancePrice(amount: Decimal(string: "4.99"), currency: "EUR", basis: .paid))
    }

    @Test("billing issue after an intro period with no stated next price: unknown")
    func introAtRisk() {
        let verdict = Decision.decide(
            row: row(tier: 1, status: "active", end: -1),
            facts: SourceFacts(
                revenueCatKnowsSubscriber: true,
                revenueCatPurchases: [Self.purchase(expires: -1, billingIssue: -1, grace: 10, period: .intro, paid: Self.eur, renewal: nil)]
            ),
            context: context)
        #expect(verdict.truth?.status == .billingIssue)
        #expect(verdict.financePrice == .unknown)
    }

    @Test("billing issue with a stated next price: the renewal price")
    func renewalAtRisk() {
        let verdict = Decision.decide(
            row: row(tier: 1, status: "active", end: -1),
            facts: SourceFacts(
                revenueCatKnowsSubscriber: true,
                revenueCatPurchases: [Self.purchase(expires: -1, billingIssue: -1, grace: 10, paid: Self.eur, renewal: Self.eurRenewal)]),
            context: context)
        #expect(verdict.financePrice == FinancePrice(amount: Decimal(string: "9.99"), currency: "EUR", basis: .renewal))
    }

    @Test("a user in no finance figure carries no price")
    func inSync() {
        let verdict = Decision.decide(
            row: row(tier: 1, status: "active", end: 5),
            facts: SourceFacts(
                revenueCatKnowsSubscriber: true, revenueCatPurchases: [Self.purchase(expires: 5, paid: Self.eur, renewal: Self.eur)]),
            context: context)
        #expect(verdict.action == .none)
        #expect(verdict.financePrice == nil)
    }
}
