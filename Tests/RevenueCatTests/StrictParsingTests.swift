import Foundation
import SubreconCore
import Testing

@testable import RevenueCat

/// (CONTRACT "Hostile answers and bounded work") A RevenueCat date is a whole RFC 3339 value in 1970...2200, or the body is unusable (the
/// user ends `fetch_error`); a negative price is unknown, never revenue.
@Suite("RevenueCat strict parsing: dates with trailing bytes, impossible or far dates fail the body; negative prices are unknown")
struct RevenueCatStrictParsingTests {
    static func entitlementBody(_ expires: String) -> Data {
        Data(#"{"subscriber":{"entitlements":{"premium":{"product_identifier":"premium_monthly","expires_date":\#(expires)}}}}"#.utf8)
    }

    static func subscriptionBody(_ field: String, _ value: String) -> Data {
        let expiry = field == "expires_date" ? "" : #""expires_date":"2026-06-30T00:00:00Z","#
        return Data(#"{"subscriber":{"subscriptions":{"p":{"store":"app_store",\#(expiry)"\#(field)":\#(value)}}}}"#.utf8)
    }

    static let unusable = [
        #""2027-01-01T00:00:00Z\u0000""#, #""2027-01-01T00:00:00Z ""#, #""2027-01-01T00:00:00Zjunk""#, #""2999-01-01T00:00:00Z""#,
        #""2026-02-30T00:00:00Z""#, #""2025-02-29T12:00:00Z""#, #""2026-13-01T00:00:00Z""#, #""2026-01-01T24:00:00Z""#,
        #""2201-01-01T00:00:00Z""#, #""2026-06-30T00:00:00.000Z1""#,
    ]

    @Test("an entitlement expires_date with trailing bytes, an impossible date or a far year fails the body", arguments: unusable)
    func entitlementExpiry(value: String) {
        #expect(throws: (any Error).self) { try RevenueCatSubscriberResponse.decode(body: Self.entitlementBody(value)) }
    }

    @Test(
        "every subscription date is read strictly",
        arguments: [
            "purchase_date", "original_purchase_date", "expires_date", "grace_period_expires_date", "refunded_at",
            "unsubscribe_detected_at", "billing_issues_detected_at", "auto_resume_date",
        ])
    func subscriptionDates(field: String) throws {
        #expect(throws: (any Error).self) {
            try RevenueCatSubscriberResponse.decode(body: Self.subscriptionBody(field, #""2026-06-30T00:00:00Z\u0000""#))
        }
        #expect(throws: (any Error).self) {
            try RevenueCatSubscriberResponse.decode(body: Self.subscriptionBody(field, #""3026-06-30T00:00:00Z""#))
        }
        _ = try RevenueCatSubscriberResponse.decode(body: Self.subscriptionBody(field, #""2026-06-30T00:00:00.123Z""#))
    }

    @Test("null is still lifetime, a missing key still unstated, a leap day and an offset still read")
    func absentIsNotUnusable() throws {
        let lifetime = try RevenueCatSubscriberResponse.decode(body: Self.entitlementBody("null"))
        #expect(lifetime.subscriber.entitlements["premium"]?.expires == .never)
        let leap = try RevenueCatSubscriberResponse.decode(body: Self.entitlementBody(#""2028-02-29T10:00:00+02:00""#))
        #expect(leap.subscriber.entitlements["premium"]?.expiresDate == Date(timeIntervalSince1970: 1_835_424_000))
        let missing = try RevenueCatSubscriberResponse.decode(
            body: Data(#"{"subscriber":{"entitlements":{"premium":{"product_identifier":"p"}}}}"#.utf8))
        #expect(missing.subscriber.entitlements["premium"]?.expires == .unstated)
    }

    @Test(
        "a negative price is unknown, never revenue; zero and positive prices are kept",
        arguments: [
            ("-3.99", nil), ("-0.01", nil), ("0", Decimal(0)), ("4.99", Decimal(string: "4.99")),
        ] as [(String, Decimal?)])
    func negativePrice(amount: String, expected: Decimal?) throws {
        let body = Self.subscriptionBody("price", #"{"amount":\#(amount),"currency":"USD"}"#)
        let response = try RevenueCatSubscriberResponse.decode(body: body)
        #expect(response.subscriber.subscriptions["p"]?.price?.amount == expected)
        let purchase = Data(
            #"{"subscriber":{"non_subscriptions":{"c":[{"id":"1","store":"app_store","price":{"amount":\#(amount),"currency":"USD"}}]}}}"#
                .utf8)
        #expect(try RevenueCatSubscriberResponse.decode(body: purchase).subscriber.nonSubscriptions["c"]?.first?.price?.amount == expected)
    }
}
