import Foundation
import StoreSimulator
import SubreconCore
import Testing

@testable import Stripe

/// Stripe's inventory (CONTRACT "Which users a run asks about"): every `active`, `trialing` and `past_due` subscription, paged, strictly decoded,
/// used whole or not at all.
@Suite("Stripe inventory against the loopback simulator")
struct StripeInventoryTests {
    static func live(_ id: String, status: String = "active", livemode: Bool? = true, userID: String? = nil)
        -> SimulatedStripeSubscription
    {
        var subscription = StripeLoopback.subscription(id, status: status)
        subscription.livemode = livemode
        if let userID { subscription.metadata = ["user_id": userID] }
        return subscription
    }

    @Test("three pages of active, then trialing and past_due, by status, expanded customers, canceled left out")
    func paging() async throws {
        try await StripeLoopback.run { loop in
            for n in 1...230 { await loop.simulator.setSubscriptions([Self.live("sub_a\(n)")], forCustomer: "cus_a\(n)") }
            await loop.simulator.setSubscriptions(
                [Self.live("sub_t1", status: "trialing"), Self.live("sub_c1", status: "canceled")], forCustomer: "cus_t")
            await loop.simulator.setSubscriptions([Self.live("sub_p1", status: "past_due")], forCustomer: "cus_p")
            await loop.simulator.setCustomerMetadata(["user_id": "user-p"], forCustomer: "cus_p")
            let inventory = try await loop.client.inventory().get()
            #expect(inventory.subscriptions.count == 232)
            #expect(inventory.pages == 5)
            #expect(inventory.customerIDs.count == 232, "cus_t once: its canceled subscription is not listed")
            #expect(!inventory.subscriptions.contains { $0.id == "sub_c1" })
            let requests = await loop.simulator.recordedRequests()
            #expect(requests.map { $0.query["status"] } == ["active", "active", "active", "trialing", "past_due"])
            #expect(requests.allSatisfy { $0.query["limit"] == "100" && $0.query["expand[]"] == "data.customer" })
            #expect(requests.allSatisfy { $0.query["customer"] == nil })
            #expect(requests.map { $0.query["starting_after"] } == [nil, "sub_a100", "sub_a200", nil, nil])
            // The expanded customer's metadata names the buyer (CONTRACT "Whose purchase it is").
            let pastDue = inventory.purchases.filter { $0.customer == "cus_p" }
            #expect(pastDue.map(\.purchase.accountToken) == ["user-p"])
            #expect(inventory.purchases.count == 232)
        }
    }

    @Test("livemode false stays a sandbox purchase, missing livemode unknown; the subscription's user_id wins")
    func livemode() async throws {
        try await StripeLoopback.run { loop in
            await loop.simulator.setSubscriptions([Self.live("sub_test", livemode: false, userID: "u-1")], forCustomer: "cus_1")
            await loop.simulator.setSubscriptions([Self.live("sub_none", livemode: nil)], forCustomer: "cus_2")
            await loop.simulator.setCustomerMetadata(["user_id": "u-customer"], forCustomer: "cus_1")
            let purchases = try await loop.client.inventory().get().purchases
            let byCustomer = Dictionary(uniqueKeysWithValues: purchases.map { ($0.customer, $0.purchase) })
            #expect(byCustomer["cus_1"]?.isSandbox == true)
            #expect(byCustomer["cus_1"]?.accountToken == "u-1")
            #expect(byCustomer["cus_2"]?.isSandbox == nil)
            #expect(byCustomer["cus_2"]?.accountToken == nil)
        }
    }

    @Test("a malformed page, an element without a customer, a page without has_more or a 5xx fails the whole inventory")
    func failures() async throws {
        let noCustomer = Data(
            #"{"object": "list", "has_more": false, "data": [{"id": "sub_x", "object": "subscription", "status": "active"}]}"#.utf8)
        let cutOff = Data(#"{"object": "list", "data": []}"#.utf8)
        let faults: [StripeFault] = [
            .malformedBody, .raw(status: 200, headers: [:], body: noCustomer), .raw(status: 200, headers: [:], body: cutOff),
            .status(503),
        ]
        for fault in faults {
            try await StripeLoopback.run(maxAttempts: 2) { loop in
                await loop.simulator.setSubscriptions([Self.live("sub_1")], forCustomer: "cus_1")
                await loop.simulator.setFault(fault, for: StripeSimulator.inventoryKey)
                let result = await loop.client.inventory()
                guard case .failure = result else {
                    Issue.record("\(fault): the inventory was taken")
                    return
                }
            }
        }
    }

    @Test("a later page that is malformed fails the inventory already read in part")
    func laterPage() async throws {
        try await StripeLoopback.run { loop in
            for n in 1...150 { await loop.simulator.setSubscriptions([Self.live("sub_\(n)")], forCustomer: "cus_\(n)") }
            // The first page answers; the second is cut off (no has_more).
            await loop.simulator.setFault(.normal, for: StripeSimulator.inventoryKey, times: 1)
            await loop.simulator.setFault(
                .raw(status: 200, headers: [:], body: Data(#"{"object": "list", "data": [{"id": "sub_x", "customer": "cus_x"}]}"#.utf8)),
                for: StripeSimulator.inventoryKey, times: 1)
            let result = await loop.client.inventory()
            guard case .failure = result else {
                Issue.record("a page without has_more was taken as the end")
                return
            }
            #expect(await loop.simulator.recordedRequests().count == 2)
        }
    }

    @Test("more pages than the cap fail the inventory, never read in part")
    func pageCap() async throws {
        try await StripeLoopback.run(maxInventoryPages: 2) { loop in
            for n in 1...250 { await loop.simulator.setSubscriptions([Self.live("sub_\(n)")], forCustomer: "cus_\(n)") }
            let result = await loop.client.inventory()
            guard case .failure(let error) = result else {
                Issue.record("250 subscriptions read within 2 pages")
                return
            }
            #expect(error.description.contains("not used in part"))
        }
    }

    @Test("strict page decoding: another object, or a subscription without an id, is malformed")
    func strictPage() {
        let bodies = [
            #"{"object": "list", "has_more": false, "data": [{"id": "ch_1", "object": "charge", "customer": "cus_1"}]}"#,
            #"{"object": "list", "has_more": false, "data": [{"object": "subscription", "customer": "cus_1"}]}"#,
            #"{"object": "list", "has_more": false, "data": [{"id": "sub_1", "customer": {"object": "customer"}}]}"#,
            #"{"object": "list", "has_more": false, "data": ["sub_1"]}"#, #"{"object": "list", "has_more": false}"#,
        ]
        for body in bodies {
            #expect(throws: (any Error).self, "\(body)") { try StripeInventoryPage.decode(body: Data(body.utf8)) }
        }
        let good = #"{"object": "list", "has_more": false, "data": [{"id": "sub_1", "customer": {"id": "cus_1"}}]}"#
        #expect((try? StripeInventoryPage.decode(body: Data(good.utf8)))?.data.first?.customer == "cus_1")
    }

    @Test("the events feed states each subscription's newest snapshot as a purchase, with its account")
    func eventsPurchases() async throws {
        try await StripeLoopback.run { loop in
            let now = Date()
            func event(_ id: String, ago: Double, user: String) -> SimulatedStripeEvent {
                var event = SimulatedStripeEvent(
                    id: id, type: "customer.subscription.updated", created: now.addingTimeInterval(-ago), customer: "cus_e",
                    objectID: "sub_e")
                event.metadata = ["user_id": user]
                event.productID = "prod_pro"
                event.periodEnd = now.addingTimeInterval(86_400 * 20)
                return event
            }
            await loop.simulator.setEvents([event("evt_old", ago: 7_200, user: "u-old"), event("evt_new", ago: 60, user: "u-new")])
            let feed = try await loop.client.events(since: now.addingTimeInterval(-86_400), until: now).get()
            #expect(feed.purchases.map(\.customer) == ["cus_e"])
            #expect(feed.purchases.map(\.purchase.accountToken) == ["u-new"])
        }
    }

    @Test("lookups expand the customer too: its metadata.user_id reaches the facts, by customer and by id")
    func lookupsExpandCustomer() async throws {
        try await StripeLoopback.run { loop in
            await loop.simulator.setSubscriptions([Self.live("sub_l1")], forCustomer: "cus_l1")
            await loop.simulator.setCustomerMetadata(["user_id": "u-l1"], forCustomer: "cus_l1")
            let listed = try await loop.client.subscriptions(customerID: "cus_l1").get()
            #expect(listed.map(\.customer) == ["cus_l1"])
            #expect(listed.map(\.accountToken) == ["u-l1"])
            let byID = try await loop.client.subscription(id: "sub_l1").get()
            #expect(byID?.accountToken == "u-l1")
            let requests = await loop.simulator.recordedRequests()
            #expect(requests.map { $0.query["expand[]"] } == ["data.latest_invoice.payments", "latest_invoice.payments"])
        }
    }
}
