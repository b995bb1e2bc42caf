import Foundation
import Stripe
import SubreconCore
import SubreconJob
import SubreconPorts

/// Stripe as a source (CONTRACT "Sources and the decision"): a user whose row has `stripe_customer_id` is asked about by customer (every
/// subscription, whatever its status); each Stripe purchase RevenueCat lists with a subscription id (`sub_…`) that
/// the customer's list did not include (all of them, without a customer id) is asked about by id. A customer or
/// subscription Stripe does not know is absence (`unknownTo`), an unknown status or any failure an error for the
/// user. A current period whose latest invoice Stripe states fully refunded is a refunded purchase (CONTRACT "Finance figures"); a
/// partial refund changes nothing. The customer's paid one-time prices (Checkout Sessions) are non-expiring purchases
/// (CONTRACT "Sources and the decision"), refunded when their payment was refunded in full.
struct StripeSource: StoreSource {
    let client: StripeClient
    let note: String

    static func make(_ stripe: StripeConfiguration, context: SourceContext) throws -> StripeSource? {
        let client = StripeClient(
            httpClient: context.httpClient, configuration: stripe, logger: context.logger, observer: context.stats,
            gate: context.gates[.stripe])
        return StripeSource(
            client: client,
            note: "Stripe API at \(stripe.baseURL) (Stripe-Version \(stripe.apiVersion)), by stripe_customer_id or "
                + "RevenueCat's sub_ ids, the current period's refunds from its invoice's charges, paid one-time prices "
                + "(checkout sessions); events feed (GET /v1/events); inventory of live subscriptions (GET /v1/subscriptions by status)")
    }

    func ask(row: UserRow, facts: inout SourceFacts) async {
        var asked = false
        var found: [StoreFact] = []
        // The row's customer, and the customer linked to the user tonight when it is another (CONTRACT "Whose purchase it is": the core
        // then decides a stale identifier from a conflict).
        for customer in Self.customers(of: row) {
            asked = true
            facts.noteAsked(.stripe)
            let answer = await client.subscriptions(customerID: customer)
            guard await record(answer, into: &found, facts: &facts) else { return }
            // The one-time prices the customer paid for (CONTRACT "Sources and the decision"): non-expiring unless refunded in full.
            switch await client.oneTimePurchases(customerID: customer) {
            case .failure(let error):
                facts.errors.append(error)
                return
            case .success(let oneTime): found += oneTime
            }
        }
        // RevenueCat's Stripe subscriptions the customer's list did not include (every one, without a customer id).
        let listed = Set(found.flatMap(\.identifiers))
        for id in Self.subscriptionIDs(in: facts) where !listed.contains(id) {
            asked = true
            facts.noteAsked(.stripe)
            let answer = await client.subscription(id: id)
            guard await record(answer.map { $0.map { [$0] } ?? [] }, into: &found, facts: &facts) else { return }
        }
        facts.stores += found
        // Nothing Stripe knows (a 404, or a customer without subscriptions): absence, not evidence.
        if asked && found.isEmpty { facts.unknownTo.append(.stripe) }
    }

    /// The customers to ask about: the row's `stripe_customer_id`, then tonight's linked customer when it differs.
    static func customers(of row: UserRow) -> [String] {
        var customers: [String] = []
        if let own = row.identifiers[.stripe], !own.isEmpty { customers.append(own) }
        if let linked = row.links[.stripe], !linked.isEmpty, !customers.contains(linked) { customers.append(linked) }
        return customers
    }

    var hasFeed: Bool { true }

    /// Stripe's events over the window (CONTRACT "Which users a run asks about"): the customer ids they name. Events whose object names no customer
    /// are counted in `entries` and not named. A fully refunded charge states a refund for its customer (CONTRACT "Finance figures").
    func feed(since: Date, until: Date) async -> FeedRead? {
        let result = await client.events(since: since, until: until)
            .map { feed in
                FeedEntries(
                    identifiers: feed.customerIDs, entries: feed.events, rejected: 0,
                    refunds: FeedRefund.of(feed.refunds.map { ($0.customer, $0.purchase) }, asOf: until),
                    purchases: Self.unlinked(feed.purchases))
            }
            .mapError { SourceError(origin: .stripe, kind: .fetch, message: "events feed: \($0.description)") }
        return FeedRead(source: Self.origin, reason: Self.eventReason, column: FeedColumn(Self.identifierColumns[0]), result: result)
    }

    var hasInventory: Bool { true }

    /// Stripe's inventory (CONTRACT "Which users a run asks about"): every `active`, `trialing` or `past_due` subscription, by customer, with the
    /// purchases they state (CONTRACT "Whose purchase it is"). A failed or incomplete read is a failed inventory, never used in part.
    func inventory() async -> FeedRead? {
        let result = await client.inventory()
            .map { inventory in
                FeedEntries(
                    identifiers: inventory.customerIDs, entries: inventory.subscriptions.count,
                    purchases: Self.unlinked(inventory.purchases))
            }
            .mapError { SourceError(origin: .stripe, kind: .fetch, message: "inventory: \($0.description)") }
        return FeedRead(
            source: Self.origin, reason: Self.inventoryReason, column: FeedColumn(Self.identifierColumns[0]), result: result)
    }

    /// The `candidate_reason` of the customers the inventory names.
    static let inventoryReason = CandidateReason.feed("stripe_inventory")

    /// Stated purchases as the job takes them: identified by the customer (the row's `stripe_customer_id`).
    static func unlinked(_ purchases: [StripeCustomerPurchase]) -> [UnlinkedPurchase] {
        purchases.map { UnlinkedPurchase(origin: .stripe, identifier: $0.customer, purchase: $0.purchase) }
    }

    /// Maps an answer into `found`, with the full refund of each current period Stripe states (its latest invoice's
    /// charges, `StripeClient.periodRefunds`); false (with the error recorded) when the user must be left untouched.
    private func record(
        _ answer: Result<[StripeSubscription], StripeError>, into found: inout [StoreFact], facts: inout SourceFacts
    ) async -> Bool {
        switch answer {
        case .failure(let error):
            facts.errors.append(SourceError(origin: .stripe, kind: .fetch, message: error.description))
            return false
        case .success(let subscriptions):
            switch StripeMapping.storeFacts(subscriptions) {
            case .failure(let error):
                facts.errors.append(error)
                return false
            case .success(var mapped):
                switch await client.periodRefunds(of: subscriptions) {
                case .failure(let error):
                    facts.errors.append(error)
                    return false
                case .success(let refunds):
                    for (id, refund) in refunds.sorted(by: { $0.key < $1.key }) {
                        mapped = StripeRefundMapping.apply(refund, subscriptionID: id, to: mapped)
                    }
                }
                found += mapped
                return true
            }
        }
    }

    /// The Stripe subscription ids RevenueCat lists for the user, once each, in order.
    static func subscriptionIDs(in facts: SourceFacts) -> [String] {
        var seen: Set<String> = []
        return facts.revenueCatPurchases.compactMap { purchase -> String? in
            guard purchase.store == .stripe, let id = purchase.storeTransactionID, id.hasPrefix("sub_"),
                seen.insert(id).inserted
            else { return nil }
            return id
        }
    }
}
