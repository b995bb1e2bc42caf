import Foundation
import SubreconCore
import Testing

@testable import RevenueCat

@Suite("Mapping a RevenueCat subscriber to purchase facts")
struct RevenueCatMappingTests {
    func facts(_ text: String, status: Int = 200) throws -> SourceFacts {
        let response = try JSONDecoder().decode(RevenueCatSubscriberResponse.self, from: Data(text.utf8))
        return response.sourceFacts(status: status)
    }

    func single(_ subscription: String) throws -> PurchaseFact {
        let all = try facts(Fixtures.subscriber(subscription: subscription)).revenueCatPurchases
        try #require(all.count == 1)
        return all[0]
    }

    @Test("the reference example gives a billing-issue App Store subscription and a Play lifetime purchase")
    func referenceExample() throws {
        let result = try facts(Fixtures.referenceExample)
        #expect(result.revenueCatKnowsSubscriber)
        #expect(result.errors.isEmpty)
        #expect(result.revenueCatPurchases.map(\.productID) == ["pro_monthly", "extras_lifetime"])
        let pro = result.revenueCatPurchases[0]
        #expect(pro.origin == .revenueCat)
        #expect(pro.store == .appStore)
        #expect(pro.kind == .subscription)
        #expect(pro.isSandbox == false)
        #expect(pro.purchaseDate == Fixtures.date("2026-01-28T18:02:11Z"))
        #expect(pro.expiresDate == Fixtures.date("2026-02-28T18:02:11Z"))
        #expect(pro.gracePeriodExpiresDate == Fixtures.date("2026-03-14T18:02:11Z"))
        #expect(pro.billingIssueDetectedAt == Fixtures.date("2026-02-28T18:05:00Z"))
        #expect(pro.autoRenew == true)
        #expect(!pro.isPaused)
        #expect(pro.refundedAt == nil)
        #expect(pro.storeTransactionID == "2000000812345678")
        #expect(pro.price == Money(amount: Decimal(string: "9.99")!, currency: "USD"))
        let extras = result.revenueCatPurchases[1]
        #expect(extras.store == .playStore)
        #expect(extras.kind == .unstated, "non-expiring only because its entitlement says so, which the core reads")
        #expect(extras.expiresDate == nil)
        #expect(result.revenueCatEntitlements.first { $0.productID == "extras_lifetime" }?.expires == .never)
        #expect(extras.autoRenew == nil)
        #expect(extras.storeTransactionID == "GPA.3345-1234-5678-90123")
        #expect(extras.price == Money(amount: Decimal(string: "19.99")!, currency: "USD"))
    }

    @Test("sandbox, refund, unsubscribe and pause carry over")
    func flags() throws {
        let fact = try single(
            #"""
            {"store": "play_store", "is_sandbox": true, "expires_date": "2026-03-10T00:00:00Z",
             "refunded_at": "2026-02-20T00:00:00Z", "unsubscribe_detected_at": "2026-02-19T00:00:00Z",
             "auto_resume_date": "2026-04-01T00:00:00Z"}
            """#)
        #expect(fact.isSandbox == true)
        #expect(fact.refundedAt == Fixtures.date("2026-02-20T00:00:00Z"))
        #expect(fact.autoRenew == false)
        #expect(fact.isPaused)
        #expect(fact.price == nil)
    }

    @Test("a promotional subscription has no auto-renew opinion")
    func promotional() throws {
        let fact = try single(#"{"store": "PROMOTIONAL", "expires_date": "2026-03-10T00:00:00Z"}"#)
        #expect(fact.store == .promotional)
        #expect(fact.autoRenew == nil)
    }

    @Test("an entitlement backed by a subscription is not counted twice")
    func noDoubleCount() throws {
        let text = Fixtures.subscriber(
            subscription: #"{"store": "promotional", "expires_date": "2026-03-10T00:00:00Z"}"#, productID: "rc_promo_pro",
            entitlements: #"{"pro": {"expires_date": "2026-03-10T00:00:00Z", "product_identifier": "rc_promo_pro"}}"#)
        #expect(try facts(text).revenueCatPurchases.count == 1)
    }

    @Test("an entitlement without a backing purchase becomes a promotional fact")
    func entitlementOnly() throws {
        let text = Fixtures.subscriber(
            subscription: #"{"store": "app_store", "expires_date": "2026-01-10T00:00:00Z"}"#, productID: "old",
            entitlements: #"""
                {"pro": {"expires_date": "2026-04-01T00:00:00Z", "grace_period_expires_date": "2026-04-08T00:00:00Z",
                         "product_identifier": "granted_pro", "purchase_date": "2026-03-01T00:00:00Z"},
                 "forever": {"expires_date": null, "product_identifier": "granted_forever"},
                 "broken": {"expires_date": null, "product_identifier": null}}
                """#)
        let purchases = try facts(text).revenueCatPurchases
        #expect(purchases.map(\.productID) == ["old", "granted_forever", "granted_pro"])
        let pro = purchases[2]
        #expect(pro.store == .promotional)
        #expect(pro.kind == .nonRenewing)
        #expect(pro.expiresDate == Fixtures.date("2026-04-01T00:00:00Z"))
        #expect(pro.gracePeriodExpiresDate == Fixtures.date("2026-04-08T00:00:00Z"))
        #expect(pro.autoRenew == nil)
        // An entitlement-only grant with `expires_date: null` is not a stated non-expiring purchase: unknown.
        #expect(purchases[1].kind == .nonRenewing)
        #expect(purchases[1].expiresDate == nil)
        #expect(Decision.judge(purchases[1], asOf: Fixtures.date("2026-03-02T00:00:00Z")).known == nil)
        let broken = try facts(text).revenueCatEntitlements.first { $0.identifier == "broken" }
        #expect(broken?.productID == nil && broken?.expires == StatedExpiry.never)
    }

    @Test("201 or an empty subscriber means unknown; a 200 with purchases means known")
    func known() throws {
        let empty =
            #"{"request_date": "2026-03-01T02:00:05Z", "subscriber": {"entitlements": {}, "subscriptions": {}, "non_subscriptions": {}}}"#
        #expect(try facts(empty, status: 200).revenueCatKnowsSubscriber == false)
        #expect(try facts(empty, status: 201).revenueCatKnowsSubscriber == false)
        #expect(try facts(Fixtures.referenceExample, status: 201).revenueCatKnowsSubscriber == false)
        #expect(try facts(Fixtures.referenceExample, status: 200).revenueCatKnowsSubscriber == true)
    }
}
