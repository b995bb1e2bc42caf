import Foundation
import Stripe
import SubreconCore

/// Stripe as a source (SPEC 5.2): a user whose row has `stripe_customer_id` is asked about by customer (every
/// subscription, whatever its status); otherwise each Stripe purchase RevenueCat lists with a subscription id
/// (`sub_…`) is asked about by id. A customer or subscription Stripe does not know is absence (`unknownTo`), an
/// unknown status or any failure an error for the user.
struct StripeSource: StoreSource {
    let client: StripeClient
    let note: String
    var origin: FactOrigin { .stripe }

    static func make(configuration: SubreconConfiguration, context: SourceContext) throws -> StripeSource? {
        guard let stripe = configuration.stripe else { return nil }
        let client = StripeClient(
            httpClient: context.httpClient, configuration: stripe, logger: context.logger, observer: context.stats,
            gate: context.gates[.stripe])
        return StripeSource(
            client: client, note: "Stripe API at \(stripe.baseURL) (Stripe-Version \(stripe.apiVersion)), by stripe_customer_id or RevenueCat's sub_ ids")
    }

    func ask(row: UserRow, facts: inout SourceFacts) async {
        if let customer = row.stripeCustomerID, !customer.isEmpty {
            facts.noteAsked(.stripe)
            switch await client.subscriptions(customerID: customer) {
            case .failure(let error):
                facts.errors.append(SourceError(origin: .stripe, kind: .fetch, message: error.description))
            case .success(let subscriptions):
                record(StripeMapping.storeFacts(subscriptions), into: &facts)
            }
            return
        }
        let ids = Self.subscriptionIDs(in: facts)
        for id in ids {
            facts.noteAsked(.stripe)
            switch await client.subscription(id: id) {
            case .failure(let error):
                facts.errors.append(SourceError(origin: .stripe, kind: .fetch, message: error.description))
                return
            case .success(nil):
                facts.unknownTo.append(.stripe)
            case .success(let subscription?):
                record(StripeMapping.storeFacts(subscription), into: &facts)
            }
            if !facts.errors.isEmpty { return }
        }
    }

    private func record(_ mapped: Result<[StoreFact], SourceError>, into facts: inout SourceFacts) {
        switch mapped {
        case .failure(let error): facts.errors.append(error)
        case .success(let stores):
            facts.stores += stores
            if stores.isEmpty { facts.unknownTo.append(.stripe) }
        }
    }

    /// The Stripe subscription ids RevenueCat lists for the user, once each, in order.
    static func subscriptionIDs(in facts: SourceFacts) -> [String] {
        var seen: Set<String> = []
        return facts.purchases.compactMap { purchase -> String? in
            guard purchase.store == .stripe, let id = purchase.storeTransactionID, id.hasPrefix("sub_"),
                seen.insert(id).inserted
            else { return nil }
            return id
        }
    }
}
