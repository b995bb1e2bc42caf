import Foundation
import Testing

@testable import RevenueCat

@Suite("Decoding RevenueCat v1 answers")
struct RevenueCatDecodingTests {
    func decode(_ text: String) throws -> RevenueCatSubscriberResponse {
        try JSONDecoder().decode(RevenueCatSubscriberResponse.self, from: Data(text.utf8))
    }

    @Test("the reference example decodes with every field in place")
    func referenceExample() throws {
        let response = try decode(Fixtures.referenceExample)
        #expect(response.requestDate == Fixtures.date("2026-03-01T02:00:05Z"))
        let subscriber = response.subscriber
        #expect(subscriber.originalAppUserID == "8f0c6a1e-4b7e-4c1e-9b1a-2f6f3c9d7e21")
        #expect(subscriber.firstSeen == Fixtures.date("2024-11-30T18:01:57Z"))
        #expect(subscriber.entitlements.keys.sorted() == ["extras", "pro"])
        #expect(subscriber.entitlements["extras"]?.expiresDate == nil)
        #expect(subscriber.entitlements["pro"]?.productIdentifier == "pro_monthly")
        let pro = try #require(subscriber.subscriptions["pro_monthly"])
        #expect(pro.store == "app_store")
        #expect(pro.expiresDate == Fixtures.date("2026-02-28T18:02:11Z"))
        #expect(pro.gracePeriodExpiresDate == Fixtures.date("2026-03-14T18:02:11Z"))
        #expect(pro.billingIssuesDetectedAt == Fixtures.date("2026-02-28T18:05:00Z"))
        #expect(pro.unsubscribeDetectedAt == nil)
        #expect(pro.price == RevenueCatPrice(amount: Decimal(string: "9.99")!, currency: "USD"))
        #expect(pro.storeTransactionID == "2000000812345678")
        let extras = try #require(subscriber.nonSubscriptions["extras_lifetime"]?.first)
        #expect(extras.store == "play_store")
        #expect(extras.id == "cadba0c81b")
        #expect(extras.price?.amount == Decimal(string: "19.99"))
        #expect(!subscriber.isEmpty)
    }

    @Test("dates with fractional seconds decode to the same instant, milliseconds kept")
    func fractionalSeconds() throws {
        let text = Fixtures.subscriber(
            subscription: #"{"store": "stripe", "expires_date": "2026-02-28T18:02:11.500Z", "is_sandbox": true}"#)
        let response = try decode(text)
        #expect(response.requestDate == Fixtures.date("2026-03-01T02:00:05.250Z"))
        let subscription = try #require(response.subscriber.subscriptions["p1"])
        #expect(subscription.expiresDate == Date(timeIntervalSince1970: Fixtures.date("2026-02-28T18:02:11Z").timeIntervalSince1970 + 0.5))
        #expect(subscription.isSandbox == true)
    }

    @Test("unknown stores and period types are kept, a missing price is nil, unknown fields ignored")
    func lenient() throws {
        let text = Fixtures.subscriber(
            subscription: #"""
                {"store": "rc_billing", "period_type": "PREPAID", "expires_date": null, "purchase_date": "2026-01-01T00:00:00Z",
                 "product_plan_identifier": "monthly", "metadata": {"a": 1}}
                """#)
        let subscription = try #require(try decode(text).subscriber.subscriptions["p1"])
        #expect(subscription.store == "rc_billing")
        #expect(subscription.periodType == "PREPAID")
        #expect(subscription.price == nil)
        #expect(subscription.isSandbox == nil, "a missing is_sandbox is unknown, not false")
    }

    @Test("a date that is not ISO 8601 is a decoding error, not a silent nil")
    func badDate() {
        let text = Fixtures.subscriber(subscription: #"{"store": "app_store", "expires_date": "yesterday"}"#)
        #expect(throws: DecodingError.self) { try decode(text) }
    }

    @Test("error bodies decode with code as number or string, and backoff_ms")
    func errorBodies() throws {
        let numeric = try JSONDecoder().decode(
            RevenueCatErrorBody.self, from: Data(#"{"code": 7225, "message": "Invalid API key"}"#.utf8))
        #expect(numeric.code == "7225")
        #expect(numeric.message == "Invalid API key")
        let text = try JSONDecoder().decode(
            RevenueCatErrorBody.self, from: Data(#"{"code": "7638", "message": "busy", "backoff_ms": 1500}"#.utf8))
        #expect(text.code == "7638")
        #expect(text.backoffMS == 1500)
        let bare = try JSONDecoder().decode(RevenueCatErrorBody.self, from: Data(#"{"message": "Bad parameters x"}"#.utf8))
        #expect(bare.code == nil)
    }

    @Test(
        "backoff_ms of any JSON shape decodes without trapping: int, float, huge, negative, string, null",
        arguments: [
            ("0", 0.0), ("1500", 1500), ("2.5", 2.5), ("-40", -40), ("1e19", 1e19), ("18446744073709551616", 18_446_744_073_709_551_616),
            ("99999999999999999999999999999999999999999", 1e41), (#""  5 ""#, 5), (#""1e19""#, 1e19), (#""inf""#, .infinity),
            (#""""#, nil), (#""nan""#, nil), (#""soon""#, nil), ("null", nil), ("1e400", nil), ("-1e400", nil), ("true", nil),
            ("[1]", nil), (#"{"a": 1}"#, nil),
        ] as [(String, Double?)])
    func backoffShapes(json: String, expected: Double?) throws {
        let body = try JSONDecoder().decode(
            RevenueCatErrorBody.self, from: Data(#"{"code": 7638, "message": "slow down", "backoff_ms": \#(json)}"#.utf8))
        #expect(body.backoffMS == expected)
        #expect(body.code == "7638" && body.message == "slow down", "the rest of the body still decodes")
    }
}
