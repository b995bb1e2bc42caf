import Foundation
import StoreSimulator
import SubreconCore
import Testing

@testable import Stripe

/// Every Stripe list is bounded and ends incomplete, never complete (CONTRACT "Hostile answers and bounded work"): a cursor seen before ends
/// it at once; a subscription's items are read in full (`items.has_more`) or the subscription is not judged.
@Suite("Stripe lists end incomplete, never complete")
struct StripePaginationTests {
    /// A list page of one element `{"id": id, …}` saying `has_more: true`.
    static func page(_ element: String) -> StripeFault {
        .raw(status: 200, headers: [:], body: Data(#"{"object": "list", "has_more": true, "url": "/v1/x", "data": [\#(element)]}"#.utf8))
    }

    static func event(_ id: String) -> String {
        #"{"id": "\#(id)", "object": "event", "type": "customer.subscription.updated", "created": 1780000000, "#
            + #""data": {"object": {"id": "sub_1", "object": "subscription", "customer": "cus_1", "status": "active"}}}"#
    }

    @Test("events whose cursors cycle (A, B, A, …) end the feed at once as incomplete: 3 requests, not 1,000")
    func eventCursorCycle() async throws {
        try await StripeLoopback.run { loop in
            for _ in 0..<300 {
                await loop.simulator.setFault(Self.page(Self.event("evt_a")), for: StripeSimulator.eventsKey, times: 1)
                await loop.simulator.setFault(Self.page(Self.event("evt_b")), for: StripeSimulator.eventsKey, times: 1)
            }
            let result = await loop.client.events(since: StripeLoopback.start, until: StripeLoopback.end)
            guard case .failure(let error) = result else {
                Issue.record("a cycling cursor was followed to a complete answer")
                return
            }
            #expect(error.description.contains("incomplete") && error.description.contains("seen before"))
            #expect(await loop.simulator.requestCount() == 3)
        }
    }

    @Test("a customer's subscription list whose cursors cycle is an error for the user after 3 requests")
    func subscriptionCursorCycle() async throws {
        try await StripeLoopback.run { loop in
            await loop.simulator.setSubscriptions([StripeLoopback.subscription("sub_a")], forCustomer: "cus_cycle")
            for _ in 0..<30 {
                for id in ["sub_a", "sub_b"] {
                    let element =
                        #"{"id": "\#(id)", "object": "subscription", "status": "active", "items": {"object": "list", "has_more": false, "data": []}}"#
                    await loop.simulator.setFault(Self.page(element), for: "cus_cycle", times: 1)
                }
            }
            let result = await loop.client.subscriptions(customerID: "cus_cycle")
            guard case .failure(let error) = result else {
                Issue.record("a cycling cursor was followed to a complete answer")
                return
            }
            #expect(error.description.contains("incomplete"))
            #expect(await loop.simulator.requestCount() == 3)
        }
    }

    static func multiItem(_ id: String) -> SimulatedStripeSubscription {
        SimulatedStripeSubscription(
            id: id, status: "active", currentPeriodStart: StripeLoopback.start, currentPeriodEnd: StripeLoopback.end,
            items: [
                SimulatedStripeItem(id: "si_\(id)_1", priceID: "price_premium", productID: "prod_premium"),
                SimulatedStripeItem(id: "si_\(id)_2", priceID: "price_addon", productID: "prod_addon"),
                SimulatedStripeItem(id: "si_\(id)_3", priceID: "price_pro", productID: "prod_pro"),
            ])
    }

    @Test("items.has_more: the remaining items are read from /v1/subscription_items, page by page, before judging")
    func itemsHaveMore() async throws {
        try await StripeLoopback.run { loop in
            await loop.simulator.setSubscriptions([Self.multiItem("sub_multi")], forCustomer: "cus_multi")
            await loop.simulator.setEmbeddedItemLimit(1)
            let listed = try await loop.client.subscriptions(customerID: "cus_multi").get()
            #expect(listed.first?.items?.compactMap(\.price?.product) == ["prod_premium", "prod_addon", "prod_pro"])
            #expect(listed.first?.itemsHaveMore == false)
            let one = try #require(try await loop.client.subscription(id: "sub_multi").get())
            #expect(one.items?.count == 3)
            let paths = await loop.simulator.recordedRequests().map(\.path)
            #expect(paths.filter { $0 == "/v1/subscription_items" }.count == 2, "once per subscription read")
        }
    }

    @Test("items.has_more and the items list failing: an error for the user, never judged on the first item alone")
    func itemsFailing() async throws {
        try await StripeLoopback.run(maxAttempts: 1) { loop in
            await loop.simulator.setSubscriptions([Self.multiItem("sub_fail")], forCustomer: "cus_fail")
            await loop.simulator.setEmbeddedItemLimit(1)
            await loop.simulator.setFault(.status(500), for: StripeSimulator.itemsKey(subscription: "sub_fail"))
            let result = await loop.client.subscriptions(customerID: "cus_fail")
            #expect(throws: StripeError.self) { try result.get() }
        }
    }

    @Test("the mapping refuses a subscription whose items list says has_more")
    func mappingRefusesPartialItems() throws {
        var subscription = StripeSubscription(
            id: "sub_p", status: "active", currentPeriodEnd: StripeLoopback.end,
            items: [
                StripeSubscriptionItem(
                    id: "si_1", currentPeriodEnd: StripeLoopback.end, price: StripePrice(id: "price_1", product: "prod_1"))
            ])
        #expect((try? StripeMapping.storeFacts(subscription).get()) != nil)
        subscription.itemsHaveMore = true
        #expect(throws: SourceError.self) { try StripeMapping.storeFacts(subscription).get() }
    }
}
