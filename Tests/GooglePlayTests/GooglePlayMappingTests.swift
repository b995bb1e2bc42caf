import Foundation
import GooglePlay
import SubreconCore
import Testing

@Suite("Google Play: SubscriptionPurchaseV2 decoding and mapping")
struct GooglePlayMappingTests {
    /// The reference page's sample, completed with the fields subrecon reads.
    static let sample = """
        {"kind":"androidpublisher#subscriptionPurchaseV2","regionCode":"US","startTime":"2024-01-15T10:00:00.123Z",
         "subscriptionState":"SUBSCRIPTION_STATE_ACTIVE","linkedPurchaseToken":null,"latestOrderId":"GPA.1111-2222-3333-44444..2",
         "acknowledgementState":"ACKNOWLEDGEMENT_STATE_ACKNOWLEDGED",
         "externalAccountIdentifiers":{"obfuscatedExternalAccountId":"u-1"},
         "lineItems":[{"productId":"premium_monthly","expiryTime":"2025-01-15T10:00:00.456789Z",
           "autoRenewingPlan":{"autoRenewEnabled":true,"recurringPrice":{"currencyCode":"EUR","units":"4","nanos":990000000},
             "priceChangeDetails":{"priceChangeMode":"OPT_IN"}},
           "offerDetails":{"basePlanId":"monthly","offerTags":["x"]},"latestSuccessfulOrderId":"GPA.1111-2222-3333-44444..2"}],
         "somethingNew":{"a":[1,2,3]}}
        """

    @Test("a real-shaped answer decodes and maps to one fact per line item")
    func realShape() throws {
        let purchase = try GoogleJSON.subscription(Data(Self.sample.utf8))
        let facts = try GooglePlayMapping.storeFacts(purchase, token: "tok-1")
        try #require(facts.count == 1)
        let fact = facts[0]
        #expect(fact.lookupID == "tok-1")
        #expect(fact.aliases == ["GPA.1111-2222-3333-44444"])
        let p = fact.purchase
        #expect(p.origin == .googlePlay)
        #expect(p.store == .playStore)
        #expect(p.kind == .subscription)
        #expect(p.productID == "premium_monthly")
        #expect(p.isSandbox == false)
        #expect(p.storeState == .active)
        #expect(p.autoRenew == true)
        #expect(p.storeTransactionID == "GPA.1111-2222-3333-44444..2")
        #expect(p.originalTransactionID == nil)
        #expect(p.renewalPrice == Money(amount: Decimal(string: "4.99")!, currency: "EUR"), "recurringPrice is the next renewal's price")
        #expect(p.price == nil, "what was paid is not stated by subscriptionsv2")
        #expect(p.purchaseDate == ISO8601.date("2024-01-15T10:00:00.123Z"))
        let expiry = try #require(p.expiresDate)
        #expect(abs(expiry.timeIntervalSince1970 - (ISO8601.date("2025-01-15T10:00:00Z")!.timeIntervalSince1970 + 0.456789)) < 0.000_01)
    }

    static func purchase(_ state: String?, autoRenew: Bool? = true, prepaid: Bool = false, test: Bool = false) -> SubscriptionPurchaseV2 {
        SubscriptionPurchaseV2(
            startTime: "2026-05-01T00:00:00Z", subscriptionState: state,
            testPurchase: test ? .init() : nil,
            lineItems: [
                SubscriptionLineItem(
                    productId: "premium_monthly", expiryTime: "2026-07-01T00:00:00Z",
                    autoRenewingPlan: prepaid ? nil : .init(autoRenewEnabled: autoRenew),
                    prepaidPlan: prepaid ? .init() : nil, latestSuccessfulOrderId: "GPA.1-2-3-4")
            ])
    }

    static let before = ISO8601.date("2026-06-01T00:00:00Z")!
    static let after = ISO8601.date("2026-08-01T00:00:00Z")!

    /// state, store state, auto-renew, entitled before expiry, status before expiry, status after (nil: unknown).
    static let stateTable: [(String, StoreState?, Bool?, Bool, SubscriptionStatus, SubscriptionStatus?)] = [
        ("SUBSCRIPTION_STATE_ACTIVE", .active, true, true, .active, nil),
        ("SUBSCRIPTION_STATE_CANCELED", nil, false, true, .canceled, .expired),
        ("SUBSCRIPTION_STATE_IN_GRACE_PERIOD", .gracePeriod, true, true, .billingIssue, .billingIssue),
        ("SUBSCRIPTION_STATE_ON_HOLD", .expired, true, false, .expired, .expired),
        ("SUBSCRIPTION_STATE_PAUSED", .paused, true, false, .paused, .paused),
        ("SUBSCRIPTION_STATE_EXPIRED", .expired, true, false, .expired, .expired),
        ("SUBSCRIPTION_STATE_PENDING", .pending, true, false, .expired, .expired),
        ("SUBSCRIPTION_STATE_PENDING_PURCHASE_CANCELED", .pending, true, false, .expired, .expired),
    ]

    @Test("every subscriptionState maps to a store state, and judge decides as CONTRACT says", arguments: stateTable)
    func states(
        state: String, storeState: StoreState?, autoRenew: Bool?, entitledBefore: Bool, statusBefore: SubscriptionStatus,
        statusAfter: SubscriptionStatus?
    ) throws {
        let fact = try #require(try GooglePlayMapping.storeFacts(Self.purchase(state), token: "t").first).purchase
        #expect(fact.storeState == storeState)
        #expect(fact.autoRenew == autoRenew)
        let before = try #require(Decision.judge(fact, asOf: Self.before).known)
        #expect(before.entitled == entitledBefore)
        #expect(before.status == statusBefore)
        if let statusAfter {
            #expect(Decision.judge(fact, asOf: Self.after).known?.status == statusAfter)
        } else {
            // ACTIVE with its expiry in the past contradicts itself: unknown, never a downgrade.
            #expect(Decision.judge(fact, asOf: Self.after).known == nil)
        }
    }

    @Test(
        "an unspecified, missing or unknown state is an error (fail closed)",
        arguments: ["SUBSCRIPTION_STATE_UNSPECIFIED", "SUBSCRIPTION_STATE_SOMETHING_NEW", "", nil] as [String?])
    func unknownStates(state: String?) {
        #expect(throws: GooglePlayMappingError.self) { try GooglePlayMapping.storeFacts(Self.purchase(state), token: "t") }
    }

    @Test("an unknown subscriptionState still decodes (the mapping refuses it, not the decoder)")
    func unknownStateDecodes() throws {
        let purchase = try GoogleJSON.subscription(Data(#"{"subscriptionState":"SUBSCRIPTION_STATE_FROM_THE_FUTURE"}"#.utf8))
        #expect(purchase.subscriptionState == "SUBSCRIPTION_STATE_FROM_THE_FUTURE")
    }

    @Test("no line items, or a line item without a product id, is an error")
    func lineItems() {
        var empty = Self.purchase("SUBSCRIPTION_STATE_ACTIVE")
        empty.lineItems = []
        #expect(throws: GooglePlayMappingError.self) { try GooglePlayMapping.storeFacts(empty, token: "t") }
        var noProduct = Self.purchase("SUBSCRIPTION_STATE_ACTIVE")
        noProduct.lineItems?[0].productId = nil
        #expect(throws: GooglePlayMappingError.self) { try GooglePlayMapping.storeFacts(noProduct, token: "t") }
    }

    @Test("testPurchase present is a sandbox purchase; absent is production; a prepaid plan is non-renewing")
    func sandboxAndPrepaid() throws {
        #expect(
            try GooglePlayMapping.storeFacts(Self.purchase("SUBSCRIPTION_STATE_ACTIVE", test: true), token: "t")[0].purchase.isSandbox
                == true)
        let decoded = try GoogleJSON.subscription(
            Data(
                #"{"subscriptionState":"SUBSCRIPTION_STATE_ACTIVE","testPurchase":{},"lineItems":[{"productId":"p","expiryTime":"2026-07-01T00:00:00Z"}]}"#
                    .utf8))
        #expect(decoded.isTestPurchase)
        #expect(try GooglePlayMapping.storeFacts(decoded, token: "t")[0].purchase.isSandbox == true)
        let prepaid = try GooglePlayMapping.storeFacts(Self.purchase("SUBSCRIPTION_STATE_ACTIVE", prepaid: true), token: "t")[0].purchase
        #expect(prepaid.kind == .nonRenewing)
        #expect(prepaid.autoRenew == false)
        #expect(prepaid.renewalPrice == nil)
    }

    static let moneyTable: [(GoogleMoney, Decimal?)] = [
        (GoogleMoney(currencyCode: "USD", units: "9", nanos: 990_000_000), Decimal(string: "9.99")),
        (GoogleMoney(currencyCode: "JPY", units: "1200", nanos: nil), Decimal(1200)),
        (GoogleMoney(currencyCode: "USD", units: "0", nanos: 500_000), Decimal(string: "0.0005")),
        (GoogleMoney(currencyCode: "USD", units: "9223372036854775807", nanos: 0), Decimal(string: "9223372036854775807")),
        (GoogleMoney(currencyCode: "USD", units: "-1", nanos: -750_000_000), nil),
        (GoogleMoney(currencyCode: "USD", units: "1", nanos: -5), nil),
        (GoogleMoney(currencyCode: "USD", units: "1", nanos: 1_000_000_000), nil),
        (GoogleMoney(currencyCode: "USD", units: "9.99", nanos: 0), nil),
        (GoogleMoney(currencyCode: "USD", units: "99999999999999999999", nanos: 0), nil),
        (GoogleMoney(currencyCode: nil, units: "9", nanos: 0), nil),
        (GoogleMoney(currencyCode: "US", units: "9", nanos: 0), nil),
        (GoogleMoney(currencyCode: "USD", units: nil, nanos: 990_000_000), nil),
    ]

    @Test("money is units + nanos / 1e9, exact; anything malformed is unknown, never guessed", arguments: moneyTable)
    func money(money: GoogleMoney, amount: Decimal?) {
        #expect(GooglePlayMapping.price(money)?.amount == amount)
        if amount != nil { #expect(GooglePlayMapping.price(money)?.currency == money.currencyCode) }
    }

    @Test("units may come as a JSON number too")
    func unitsAsNumber() throws {
        let money = try JSONDecoder().decode(GoogleMoney.self, from: Data(#"{"currencyCode":"USD","units":12,"nanos":10000000}"#.utf8))
        #expect(GooglePlayMapping.price(money)?.amount == Decimal(string: "12.01"))
    }

    static let timeTable: [(String, Double?)] = [
        ("2026-07-01T00:00:00Z", 1_782_864_000.0 as Double?), ("2026-07-01T00:00:00.5Z", 1_782_864_000.5),
        ("2026-07-01T00:00:00.123456789Z", 1_782_864_000.123456789), ("2026-07-01T02:00:00+02:00", 1_782_864_000),
        ("2026-07-01T02:00:00.250+02:00", 1_782_864_000.25), ("2026-07-01", nil), ("2026-07-01T00:00:00.Z", nil),
        ("tomorrow", nil), ("", nil), ("1900-01-01T00:00:00Z", nil), ("12026-07-01T00:00:00Z", nil),
    ]

    @Test("RFC 3339 times with or without fractional seconds, Z or an offset; anything else is unknown", arguments: timeTable)
    func times(text: String, seconds: Double?) {
        let date = GooglePlayMapping.date(text)
        if let seconds {
            #expect(abs((date?.timeIntervalSince1970 ?? 0) - seconds) < 0.000_01)
        } else {
            #expect(date == nil)
        }
    }

    @Test(
        "order ids lose their ..N renewal suffix in the alias",
        arguments: [
            ("GPA.1234-5678-9012-34567..3", "GPA.1234-5678-9012-34567"), ("GPA.1234-5678-9012-34567", "GPA.1234-5678-9012-34567"),
            ("GPA.1..x", "GPA.1..x"), ("..", ".."), ("GPA.9..12", "GPA.9"),
        ])
    func orderBase(order: String, base: String) {
        #expect(GooglePlayMapping.orderBase(order) == base)
    }

    @Test("410 evidence: an expired subscription of the row's product, no dates")
    func goneEvidence() throws {
        let fact = GooglePlayMapping.expiredEvidence(token: "old", productID: "premium_monthly")
        #expect(fact.purchase.storeState == .expired)
        #expect(fact.purchase.expiresDate == nil)
        #expect(
            Decision.judge(fact.purchase, asOf: Self.before).known == PurchaseJudgement(entitled: false, status: .expired, expiresDate: nil)
        )
    }

    @Test("hostile bodies never trap: they decode to something or fail")
    func hostile() {
        let bodies: [String] = [
            "", "null", "[]", "{", #"{"lineItems":{}}"#, #"{"lineItems":[null]}"#, #"{"startTime":5}"#,
            #"{"subscriptionState":"\u0000"}"#, #"{"lineItems":[{"autoRenewingPlan":{"recurringPrice":{"units":1e400}}}]}"#,
            #"{"lineItems":[{"autoRenewingPlan":{"recurringPrice":{"units":"1","nanos":1e30}}}]}"#,
            #"{"testPurchase":"yes","subscriptionState":"SUBSCRIPTION_STATE_ACTIVE","lineItems":[{"productId":"\u0000p","expiryTime":"9999-99-99T99:99:99Z"}]}"#,
            String(repeating: "[", count: 10_000), "\u{FF}\u{FE}",
        ]
        for body in bodies {
            var data = Data(body.utf8)
            if body == "\u{FF}\u{FE}" { data = Data([0xFF, 0xFE, 0x7B]) }
            if let purchase = try? GoogleJSON.subscription(data) {
                if let facts = try? GooglePlayMapping.storeFacts(purchase, token: "t") {
                    for fact in facts { #expect(!fact.purchase.productID.unicodeScalars.contains("\u{0}")) }
                }
            }
            _ = GoogleJSON.error(data)
            _ = GoogleJSON.token(data)
        }
    }
}
