import Foundation
import SubreconCore
import Testing

@testable import Stripe

/// Real-shaped Stripe bodies (field names and nesting as Stripe's API reference shows them; values illustrative).
enum StripeFixtures {
    /// 2025-03-31.basil and later: the period lives on each item.
    static let basilList = #"""
        {
          "object": "list",
          "url": "/v1/subscriptions",
          "has_more": false,
          "data": [
            {
              "id": "sub_1MowQVLkdIwHu7ixeRlqHVzs",
              "object": "subscription",
              "application": null,
              "billing_cycle_anchor": 1679609767,
              "cancel_at": null,
              "cancel_at_period_end": false,
              "canceled_at": null,
              "collection_method": "charge_automatically",
              "created": 1679609767,
              "currency": "usd",
              "customer": "cus_Na6dX7aXxi11N4",
              "ended_at": null,
              "items": {
                "object": "list",
                "data": [
                  {
                    "id": "si_Na6dzxczY5fwHx",
                    "object": "subscription_item",
                    "created": 1679609768,
                    "current_period_end": 1682288167,
                    "current_period_start": 1679609767,
                    "metadata": {},
                    "price": {
                      "id": "price_1MowQULkdIwHu7ixraBm864M",
                      "object": "price",
                      "active": true,
                      "billing_scheme": "per_unit",
                      "currency": "usd",
                      "livemode": false,
                      "product": "prod_Na6dGcTsmU0I4R",
                      "recurring": {"interval": "month", "interval_count": 1, "usage_type": "licensed"},
                      "type": "recurring",
                      "unit_amount": 1000,
                      "unit_amount_decimal": "1000"
                    },
                    "quantity": 1,
                    "subscription": "sub_1MowQVLkdIwHu7ixeRlqHVzs",
                    "tax_rates": []
                  }
                ],
                "has_more": false,
                "total_count": 1,
                "url": "/v1/subscription_items?subscription=sub_1MowQVLkdIwHu7ixeRlqHVzs"
              },
              "latest_invoice": "in_1MowQWLkdIwHu7ixuzkSPfKd",
              "livemode": false,
              "metadata": {},
              "pause_collection": null,
              "start_date": 1679609767,
              "status": "active",
              "trial_end": null
            }
          ]
        }
        """#

    /// Before 2025-03-31.basil: the period lives on the subscription; the product is expanded.
    static let olderSubscription = #"""
        {
          "id": "sub_1OldLayout",
          "object": "subscription",
          "cancel_at": null,
          "cancel_at_period_end": true,
          "canceled_at": 1700000000,
          "created": 1690000000,
          "current_period_end": 1702592000,
          "current_period_start": 1699913600,
          "customer": {"id": "cus_Expanded", "object": "customer"},
          "items": {
            "object": "list",
            "data": [
              {
                "id": "si_Old1",
                "object": "subscription_item",
                "price": {
                  "id": "price_Yearly",
                  "object": "price",
                  "currency": "jpy",
                  "product": {"id": "prod_Yearly", "object": "product", "name": "Pro"},
                  "type": "recurring",
                  "unit_amount": 12000
                },
                "quantity": 2
              }
            ],
            "has_more": false
          },
          "livemode": true,
          "status": "trialing"
        }
        """#
}

@Suite("Stripe wire decoding")
struct StripeDecodingTests {
    @Test("a basil list decodes: item-level period, string product, livemode, has_more")
    func basilList() throws {
        let list = try StripeSubscriptionList.decode(body: Data(StripeFixtures.basilList.utf8))
        #expect(list.object == "list")
        #expect(list.hasMore == false)
        let subscription = try #require(list.data.first)
        #expect(subscription.id == "sub_1MowQVLkdIwHu7ixeRlqHVzs")
        #expect(subscription.customer == "cus_Na6dX7aXxi11N4")
        #expect(subscription.status == "active")
        #expect(subscription.livemode == false)
        #expect(subscription.cancelAtPeriodEnd == false)
        #expect(subscription.cancelAt == nil)
        #expect(subscription.currentPeriodEnd == nil)
        let item = try #require(subscription.items?.first)
        #expect(item.id == "si_Na6dzxczY5fwHx")
        #expect(item.currentPeriodEnd == Date(timeIntervalSince1970: 1_682_288_167))
        #expect(item.currentPeriodStart == Date(timeIntervalSince1970: 1_679_609_767))
        #expect(item.quantity == 1)
        #expect(item.price?.id == "price_1MowQULkdIwHu7ixraBm864M")
        #expect(item.price?.product == "prod_Na6dGcTsmU0I4R")
        #expect(item.price?.unitAmount == 1000)
        #expect(item.price?.currency == "usd")
    }

    @Test("an older-version subscription decodes: top-level period, expanded customer and product")
    func olderSubscription() throws {
        let subscription = try StripeSubscription.decode(body: Data(StripeFixtures.olderSubscription.utf8))
        #expect(subscription.customer == "cus_Expanded")
        #expect(subscription.currentPeriodEnd == Date(timeIntervalSince1970: 1_702_592_000))
        #expect(subscription.currentPeriodStart == Date(timeIntervalSince1970: 1_699_913_600))
        #expect(subscription.canceledAt == Date(timeIntervalSince1970: 1_700_000_000))
        let item = try #require(subscription.items?.first)
        #expect(item.currentPeriodEnd == nil)
        #expect(item.price?.product == "prod_Yearly")
        #expect(item.quantity == 2)
    }

    @Test("wrong types and absurd numbers are unknown, never defaults and never a trap")
    func wrongTypes() throws {
        let body = #"""
            {"id": 42, "object": "subscription", "status": ["active"], "livemode": "false", "cancel_at_period_end": 1,
             "cancel_at": 1e300, "canceled_at": -5, "ended_at": "1700000000", "current_period_end": 123456789012345678901234567890,
             "items": {"data": [{"id": "si_1", "quantity": 1e300, "current_period_end": "soon",
                                 "price": {"id": "price_1", "product": 7, "unit_amount": 99999999999999999999999, "currency": 3}},
                                {"id": "si_2", "quantity": "3", "price": {"id": "price_2", "unit_amount": 12.5}},
                                {"id": "si_3", "quantity": -1.5, "price": "price_3"}]}}
            """#
        let subscription = try StripeSubscription.decode(body: Data(body.utf8))
        #expect(subscription.id == nil)
        #expect(subscription.status == nil)
        #expect(subscription.livemode == nil)
        #expect(subscription.cancelAtPeriodEnd == nil)
        #expect(subscription.cancelAt == nil)
        #expect(subscription.canceledAt == nil)
        #expect(subscription.endedAt == Date(timeIntervalSince1970: 1_700_000_000))
        #expect(subscription.currentPeriodEnd == nil)
        let items = try #require(subscription.items)
        #expect(items.count == 3)
        #expect(items[0].quantity == nil)
        #expect(items[0].currentPeriodEnd == nil)
        #expect(items[0].price?.product == nil)
        #expect(items[0].price?.unitAmount == nil)
        #expect(items[0].price?.currency == nil)
        #expect(items[1].quantity == 3)
        #expect(items[1].price?.unitAmount == nil)
        #expect(items[2].quantity == nil)
        #expect(items[2].price == nil)
    }

    @Test("bodies that are not a list fail the decode; NUL is made visible")
    func hostileBodies() throws {
        let bad: [String] = [
            "", "null", "[]", "{}", #"{"object":"list"}"#, #"{"object":"list","data":[1]}"#, #"{"object":"list","data":"x"}"#,
        ]
        for text in bad {
            #expect(throws: (any Error).self) { try StripeSubscriptionList.decode(body: Data(text.utf8)) }
        }
        // A raw NUL inside a string is not JSON: the body fails, or the field is unknown.
        let raw = try? StripeSubscriptionList.decode(body: Data("{\"object\":\"list\",\"data\":[{\"id\":\"sub_\u{0}\"}]}".utf8))
        #expect(raw?.data.first?.id == nil)
        let nul = #"{"object":"list","has_more":false,"data":[{"id":"sub_a\u0000b","status":"active\u0000"}]}"#
        let list = try StripeSubscriptionList.decode(body: Data(nul.utf8))
        #expect(list.data.first?.id == "sub_a\\u0000b")
        #expect(list.data.first?.status == "active\\u0000")
    }

    enum Hostile: String, CaseIterable, Sendable {
        case deepArrays, deepObject, junk, invalidUTF8, bigList

        var body: Data {
            switch self {
            case .deepArrays:
                return Data((String(repeating: "[", count: 20_000) + String(repeating: "]", count: 20_000)).utf8)
            case .deepObject:
                return Data(
                    (#"{"object":"list","has_more":false,"data":[{"id":"sub_1","metadata":"#
                        + String(repeating: #"{"a":"#, count: 5_000) + "1" + String(repeating: "}", count: 5_000) + "}]}").utf8)
            case .junk:
                var generator = SplitMix(seed: 42)
                return Data((0..<(2 * 1024 * 1024)).map { _ in UInt8(truncatingIfNeeded: generator.next()) })
            case .invalidUTF8:
                return Data([0xFF, 0xFE, 0x7B, 0x00, 0x7D])
            case .bigList:
                let element = #"{"id":"sub_x","status":"active","items":{"data":[{"id":"si","price":{"id":"p","unit_amount":1e308}}]}}"#
                return Data(
                    (#"{"object":"list","has_more":false,"data":["# + Array(repeating: element, count: 5_000).joined(separator: ",") + "]}")
                        .utf8)
            }
        }
    }

    @Test("deep nesting, invalid UTF-8 and a few MB of junk never trap", arguments: Hostile.allCases)
    func neverTraps(_ hostile: Hostile) {
        let body = hostile.body
        let list = try? StripeSubscriptionList.decode(body: body)
        if hostile != .junk {  // the same sanitizing path; 2 MB of junk takes seconds in a debug build
            _ = try? StripeSubscription.decode(body: body)
            _ = StripeErrorBody.decode(body: body)
        }
        if hostile == .bigList {
            #expect(list?.data.count == 5_000)
            #expect(list?.data.first?.items?.first?.price?.unitAmount == nil)
        } else {
            #expect(list == nil)
        }
    }

    @Test("Stripe's error body decodes, with code and param")
    func errorBody() {
        let body =
            #"{"error":{"code":"resource_missing","doc_url":"https://stripe.com/docs/error-codes/resource-missing","message":"No such customer: 'cus_x'","param":"customer","type":"invalid_request_error"}}"#
        let error = StripeErrorBody.decode(body: Data(body.utf8))
        #expect(error?.code == "resource_missing")
        #expect(error?.param == "customer")
        #expect(error?.type == "invalid_request_error")
        #expect(StripeErrorBody.decode(body: Data("{}".utf8)) == nil)
    }
}

/// A tiny deterministic generator for junk bodies.
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
