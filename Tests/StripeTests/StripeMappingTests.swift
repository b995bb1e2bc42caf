import Foundation
import SubreconCore
import Testing

@testable import Stripe

@Suite("Stripe subscription → StoreFact mapping")
struct StripeMappingTests {
    static let start = Date(timeIntervalSince1970: 1_780_000_000)
    static let end = Date(timeIntervalSince1970: 1_782_592_000)
    static let asOf = Date(timeIntervalSince1970: 1_781_000_000)

    static func subscription(
        status: String?, livemode: Bool? = true, cancelAtPeriodEnd: Bool? = false, cancelAt: Date? = nil,
        endedAt: Date? = nil, itemLevel: Bool = true, items: [StripeSubscriptionItem]? = nil
    ) -> StripeSubscription {
        let item = StripeSubscriptionItem(
            id: "si_1", currentPeriodStart: itemLevel ? start : nil, currentPeriodEnd: itemLevel ? end : nil, quantity: 1,
            price: StripePrice(id: "price_month", product: "prod_pro", unitAmount: 999, currency: "usd"))
        return StripeSubscription(
            id: "sub_1", status: status, livemode: livemode, cancelAtPeriodEnd: cancelAtPeriodEnd, cancelAt: cancelAt,
            endedAt: endedAt, currentPeriodStart: itemLevel ? nil : start, currentPeriodEnd: itemLevel ? nil : end,
            items: items ?? [item])
    }

    static func only(_ subscription: StripeSubscription) throws -> StoreFact {
        let facts = try StripeMapping.storeFacts(subscription).get()
        try #require(facts.count == 1)
        return facts[0]
    }

    struct StatusRow: Sendable, CustomTestStringConvertible {
        var status: String
        var state: StoreState
        var entitled: Bool
        var judged: SubscriptionStatus
        var testDescription: String { status }
    }

    @Test(
        "every Stripe status maps to a store state, and the core judges it as CONTRACT 'Sources and the decision' says",
        arguments: [
            StatusRow(status: "active", state: .active, entitled: true, judged: .active),
            StatusRow(status: "trialing", state: .active, entitled: true, judged: .active),
            StatusRow(status: "past_due", state: .gracePeriod, entitled: true, judged: .billingIssue),
            StatusRow(status: "paused", state: .paused, entitled: false, judged: .paused),
            StatusRow(status: "canceled", state: .expired, entitled: false, judged: .expired),
            StatusRow(status: "unpaid", state: .expired, entitled: false, judged: .expired),
            StatusRow(status: "incomplete_expired", state: .expired, entitled: false, judged: .expired),
            StatusRow(status: "incomplete", state: .pending, entitled: false, judged: .expired),
        ])
    func statusTable(_ row: StatusRow) throws {
        let fact = try Self.only(Self.subscription(status: row.status))
        #expect(fact.purchase.storeState == row.state)
        #expect(fact.purchase.isPaused == (row.state == .paused))
        guard case .known(let judgement) = Decision.judge(fact.purchase, asOf: Self.asOf) else {
            Issue.record("judged unknown")
            return
        }
        #expect(judgement.entitled == row.entitled)
        #expect(judgement.status == row.judged)
        #expect(fact.purchase.periodType == (row.status == "trialing" ? .trial : nil), "a trialing subscription is a free trial")
    }

    @Test("an unknown or missing status is an error for the user, never a guess", arguments: ["ACTIVE", "on_hold", "", nil] as [String?])
    func unknownStatus(_ status: String?) {
        guard case .failure(let error) = StripeMapping.storeFacts(Self.subscription(status: status)) else {
            Issue.record("mapped")
            return
        }
        #expect(error.origin == .stripe)
        #expect(error.kind == .fetch)
        #expect(error.message.contains("unknown status"))
    }

    @Test("identifiers: product id first, price id as alternate, sub_ as transaction ids, si_ as alias")
    func identifiers() throws {
        let fact = try Self.only(Self.subscription(status: "active"))
        #expect(fact.lookupID == "sub_1")
        #expect(fact.purchase.origin == .stripe)
        #expect(fact.purchase.store == .stripe)
        #expect(fact.purchase.kind == .subscription)
        #expect(fact.purchase.productID == "prod_pro")
        #expect(fact.purchase.alternateProductIDs == ["price_month"])
        #expect(fact.purchase.originalTransactionID == "sub_1")
        #expect(fact.purchase.storeTransactionID == "sub_1")
        #expect(fact.aliases == ["si_1"])
        #expect(fact.purchase.purchaseDate == Self.start)
        #expect(fact.purchase.expiresDate == Self.end)
        #expect(fact.purchase.autoRenew == true)
        #expect(
            fact.purchase.renewalPrice == Money(amount: Decimal(string: "9.99")!, currency: "USD"),
            "unit_amount × quantity is the renewal price")
        #expect(fact.purchase.price == nil && fact.purchase.periodType == nil)
    }

    @Test("a price without a product is known by its price id alone")
    func priceOnly() throws {
        let item = StripeSubscriptionItem(
            id: "si_2", currentPeriodEnd: Self.end, price: StripePrice(id: "price_only", product: nil, unitAmount: 500, currency: "eur"))
        let fact = try Self.only(Self.subscription(status: "active", items: [item]))
        #expect(fact.purchase.productID == "price_only")
        #expect(fact.purchase.alternateProductIDs.isEmpty)
        let none = StripeSubscriptionItem(id: "si_3", currentPeriodEnd: Self.end, price: nil)
        #expect(throws: SourceError.self) { try StripeMapping.storeFacts(Self.subscription(status: "active", items: [none])).get() }
        #expect(throws: SourceError.self) { try StripeMapping.storeFacts(Self.subscription(status: "active", items: [])).get() }
    }

    @Test("the period comes from the item, else the subscription (older versions), else it is unknown")
    func periodLayouts() throws {
        let older = try Self.only(Self.subscription(status: "active", itemLevel: false))
        #expect(older.purchase.expiresDate == Self.end)
        #expect(older.purchase.purchaseDate == Self.start)
        let item = StripeSubscriptionItem(
            id: "si_1", price: StripePrice(id: "price_month", product: "prod_pro", unitAmount: 999, currency: "usd"))
        let unknown = try Self.only(Self.subscription(status: "active", itemLevel: true, items: [item]))
        #expect(unknown.purchase.expiresDate == nil)
        guard case .unknown = Decision.judge(unknown.purchase, asOf: Self.asOf) else {
            Issue.record("a subscription without an end must be unknown")
            return
        }
    }

    @Test("cancel_at_period_end and cancel_at mean it will not renew: canceled, entitled until the end")
    func cancellation() throws {
        let atEnd = try Self.only(Self.subscription(status: "active", cancelAtPeriodEnd: true))
        #expect(atEnd.purchase.autoRenew == false)
        guard case .known(let judged) = Decision.judge(atEnd.purchase, asOf: Self.asOf) else {
            Issue.record("unknown")
            return
        }
        #expect(judged.status == .canceled)
        #expect(judged.entitled)

        let cancelAt = Self.end.addingTimeInterval(-86_400)
        let early = try Self.only(Self.subscription(status: "active", cancelAtPeriodEnd: false, cancelAt: cancelAt))
        #expect(early.purchase.autoRenew == false)
        #expect(early.purchase.expiresDate == cancelAt)

        let later = try Self.only(Self.subscription(status: "active", cancelAt: Self.end.addingTimeInterval(86_400 * 60)))
        #expect(later.purchase.autoRenew == true)
        #expect(later.purchase.expiresDate == Self.end)

        let unstated = try Self.only(Self.subscription(status: "active", cancelAtPeriodEnd: nil))
        #expect(unstated.purchase.autoRenew == nil)
    }

    @Test("a canceled subscription is dated by ended_at when it ended before the period end")
    func endedAt() throws {
        let ended = Self.start.addingTimeInterval(3600)
        let fact = try Self.only(Self.subscription(status: "canceled", endedAt: ended))
        #expect(fact.purchase.expiresDate == ended)
        #expect(fact.purchase.storeState == .expired)
    }

    @Test("livemode false is sandbox, true is live, missing is unknown", arguments: [(false, true), (true, false)] as [(Bool, Bool)])
    func livemode(_ livemode: Bool, _ sandbox: Bool) throws {
        #expect(try Self.only(Self.subscription(status: "active", livemode: livemode)).purchase.isSandbox == sandbox)
    }

    @Test("missing livemode leaves the environment unknown")
    func livemodeMissing() throws {
        #expect(try Self.only(Self.subscription(status: "active", livemode: nil)).purchase.isSandbox == nil)
    }

    struct MoneyRow: Sendable, CustomTestStringConvertible {
        var currency: String
        var unit: Int64
        var quantity: Int64
        var expected: String
        var testDescription: String { "\(unit)x\(quantity) \(currency)" }
    }

    @Test(
        "prices are unit_amount x quantity in the currency's minor units, exact",
        arguments: [
            MoneyRow(currency: "usd", unit: 999, quantity: 1, expected: "9.99"),
            MoneyRow(currency: "eur", unit: 1000, quantity: 3, expected: "30"),
            MoneyRow(currency: "jpy", unit: 12000, quantity: 2, expected: "24000"),
            MoneyRow(currency: "krw", unit: 5500, quantity: 1, expected: "5500"),
            MoneyRow(currency: "bhd", unit: 5125, quantity: 1, expected: "5.125"),
            MoneyRow(currency: "KWD", unit: 1, quantity: 1, expected: "0.001"),
            MoneyRow(currency: "jod", unit: 2000, quantity: 2, expected: "4"),
            MoneyRow(currency: "omr", unit: 3333, quantity: 3, expected: "9.999"),
            MoneyRow(currency: "tnd", unit: 10, quantity: 1, expected: "0.01"),
            MoneyRow(currency: "clp", unit: 990, quantity: 1, expected: "990"),
            MoneyRow(
                currency: "usd", unit: 999_999_999_999_999, quantity: 999_999_999,
                expected: "9999999989999990000000.01"),
        ])
    func money(_ row: MoneyRow) {
        let item = StripeSubscriptionItem(
            id: "si", quantity: row.quantity, price: StripePrice(id: "p", product: "prod", unitAmount: row.unit, currency: row.currency))
        let price = StripeMapping.price(of: item, subscriptionCurrency: nil)
        #expect(price == Money(amount: Decimal(string: row.expected)!, currency: row.currency))
    }

    @Test("a price is unknown without unit_amount, quantity or a usable currency")
    func unknownPrice() {
        func price(_ unit: Int64?, _ quantity: Int64?, _ currency: String?, subscription: String? = nil) -> Money? {
            let item = StripeSubscriptionItem(
                id: "si", quantity: quantity, price: StripePrice(id: "p", product: "prod", unitAmount: unit, currency: currency))
            return StripeMapping.price(of: item, subscriptionCurrency: subscription)
        }
        #expect(price(nil, 1, "usd") == nil)
        #expect(price(100, nil, "usd") == nil)
        #expect(price(100, 1, nil) == nil)
        #expect(price(100, 1, "us") == nil)
        #expect(price(100, 1, "€€€") == nil)
        #expect(price(-100, 1, "usd") == nil)
        #expect(price(.max, .max, "usd") == nil)
        #expect(price(StripeMapping.maxUnitAmount + 1, 1, "usd") == nil)
        #expect(price(1, StripeMapping.maxQuantity + 1, "usd") == nil)
        #expect(price(100, 1, nil, subscription: "gbp") == Money(amount: 1, currency: "GBP"))
    }

    @Test("every subscription of a customer maps; one bad one fails them all")
    func manySubscriptions() {
        let good = Self.subscription(status: "active")
        var second = Self.subscription(status: "canceled")
        second.id = "sub_2"
        #expect((try? StripeMapping.storeFacts([good, second]).get())?.map(\.lookupID) == ["sub_1", "sub_2"])
        #expect((try? StripeMapping.storeFacts([good, Self.subscription(status: "weird")]).get()) == nil)
        #expect((try? StripeMapping.storeFacts([StripeSubscription]()).get()) == [])
    }
}
