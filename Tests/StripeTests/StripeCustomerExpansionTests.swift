import Foundation
import StoreSimulator
import SubreconCore
import Testing

@testable import Stripe

/// An expansion the job asked for and did not get (docs/CONTRACT.md "Whose purchase it is"): every list or object
/// read with `expand[]=data.customer` (or `customer`) that comes back with the customer as a bare `"cus_…"` string
/// leaves the buyer unknown, never "nobody": the lookup fails for that user, and the inventory states no purchase
/// (no link, no orphan). The buyer the subscription or session names itself is still read.
@Suite("Stripe: a customer expansion asked for and not made leaves the buyer unknown")
struct StripeCustomerExpansionTests {
    static let customer = "cus_exp"

    /// A customer whose only statement of its buyer is its own `metadata.user_id`, which only the expansion shows.
    static func seed(_ loop: StripeLoopback, ignoring: Bool, subscriptionUserID: String? = nil) async {
        var subscription = StripeLoopback.subscription("sub_exp")
        if let subscriptionUserID { subscription.metadata = ["user_id": subscriptionUserID] }
        await loop.simulator.setSubscriptions([subscription], forCustomer: customer)
        await loop.simulator.setCustomerMetadata(["user_id": "u-exp"], forCustomer: customer)
        let session = SimulatedStripeCheckoutSession(
            id: "cs_exp", created: StripeLoopback.start, paymentIntentID: "pi_exp",
            lineItems: [SimulatedStripeLineItem(id: "li_exp", priceID: "price_life", productID: "prod_life")])
        await loop.simulator.setCheckoutSessions([session], forCustomer: customer)
        await loop.simulator.setIgnoresCustomerExpansion(ignoring)
    }

    static func isUnknownBuyer(_ result: Result<[StoreFact], SourceError>) -> Bool {
        guard case .failure(let error) = result else { return false }
        return error.kind == .fetch && error.message.contains("bare id") && error.message.contains(customer)
    }

    @Test("subscriptions by customer: the expanded customer names the buyer; unexpanded, the user is a fetch error")
    func subscriptionsByCustomer() async throws {
        for ignoring in [false, true] {
            try await StripeLoopback.run { loop in
                await Self.seed(loop, ignoring: ignoring)
                let listed = try await loop.client.subscriptions(customerID: Self.customer).get()
                let mapped = StripeMapping.storeFacts(listed)
                if ignoring {
                    #expect(Self.isUnknownBuyer(mapped), "the buyer was read as \(mapped)")
                } else {
                    #expect(try mapped.get().map(\.purchase.buyer) == [.stated("u-exp", store: .stripe)])
                }
            }
        }
    }

    @Test("a subscription by id (expand[]=customer): unexpanded, the user is a fetch error")
    func subscriptionByID() async throws {
        try await StripeLoopback.run { loop in
            await Self.seed(loop, ignoring: true)
            let subscription = try #require(try await loop.client.subscription(id: "sub_exp").get())
            #expect(subscription.statedBuyer == .unknown(customer: Self.customer))
            #expect(subscription.accountToken == nil)
            #expect(Self.isUnknownBuyer(StripeMapping.storeFacts(subscription)))
        }
    }

    @Test("the subscription's own user_id is still the buyer: the customer is never read then")
    func ownUserIDWins() async throws {
        try await StripeLoopback.run { loop in
            await Self.seed(loop, ignoring: true, subscriptionUserID: "u-own")
            let listed = try await loop.client.subscriptions(customerID: Self.customer).get()
            #expect(try StripeMapping.storeFacts(listed).get().map(\.purchase.buyer) == [.stated("u-own", store: .stripe)])
        }
    }

    @Test("the inventory: an unexpanded customer states no purchase (never an orphan naming nobody); its customer is still named")
    func inventory() async throws {
        for ignoring in [false, true] {
            try await StripeLoopback.run { loop in
                await Self.seed(loop, ignoring: ignoring)
                let inventory = try await loop.client.inventory().get()
                #expect(inventory.customerIDs == [Self.customer])
                let buyers = inventory.purchases.map(\.purchase.buyer)
                #expect(buyers == (ignoring ? [] : [.stated("u-exp", store: .stripe)]), "\(buyers)")
            }
        }
    }

    @Test("checkout sessions (one-time prices): unexpanded, the buyer is unknown and the user a fetch error, never granted")
    func checkoutSessions() async throws {
        for ignoring in [false, true] {
            try await StripeLoopback.run { loop in
                await Self.seed(loop, ignoring: ignoring)
                let result = await loop.client.oneTimePurchases(customerID: Self.customer)
                if ignoring {
                    #expect(Self.isUnknownBuyer(result), "the buyer was read as \(result)")
                } else {
                    #expect((try? result.get())?.map(\.purchase.buyer) == [.stated("u-exp", store: .stripe)], "\(result)")
                }
                let requests = await loop.simulator.recordedRequests().filter { $0.path.hasPrefix("/v1/checkout/sessions") }
                #expect(requests.first?.queryValues["expand[]"]?.contains("data.customer") == true)
            }
        }
    }
}
