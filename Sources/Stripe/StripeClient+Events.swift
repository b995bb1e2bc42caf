import Foundation
import Logging
import SubreconCore

/// What reading Stripe's events over a window gave (CONTRACT "Which users a run asks about" store feeds).
public struct StripeEventFeed: Sendable, Hashable {
    /// The customer id of each event that names one, one per event id, in the order read (newest first).
    public var customerIDs: [String] = []
    /// Events read, after deduplication by `id` (events without an `id` are each counted).
    public var events = 0
    /// Events whose `data.object` names no customer (a guest charge): counted in `events`, not acted on.
    public var withoutCustomer = 0
    /// Pages read.
    public var pages = 0
    /// The refunded purchases the events state (`charge.refunded` of a fully refunded charge naming a customer;
    /// `StripeEvent.refundedPurchase`), with that customer, in the order read.
    public var refunds: [StripeCustomerPurchase] = []
    /// The purchases the subscription events state (`StripeEvent.statedPurchases`), from the newest snapshot of each
    /// subscription (events are read newest first), with the customer each names.
    public var purchases: [StripeCustomerPurchase] = []

    public init() {}
}

extension StripeClient {
    /// The event types the feed asks for: the ones that change what a customer is entitled to inside a paid period.
    /// Subscription created (a missed grant), updated (status `past_due`/`unpaid`/`canceled`, `cancel_at_period_end`,
    /// plan changes, renewals), deleted (ended at once), paused and resumed; `charge.refunded` (a refund, which may
    /// come with a cancellation). Disputes are not asked: a dispute object names the charge, not the customer.
    public static let feedEventTypes = [
        "customer.subscription.created", "customer.subscription.updated", "customer.subscription.deleted",
        "customer.subscription.paused", "customer.subscription.resumed", "charge.refunded",
    ]

    /// Every event of `feedEventTypes` created in `[since, until)`: `GET /v1/events` with `created[gte]`,
    /// `created[lt]`, `types[n]`, `limit=100`, every page by `has_more` and `starting_after` (at most
    /// `maxEventPages`, beyond is an error). Events are deduplicated by `id`; the customer of each event's
    /// `data.object` is named. Any request failing, or a page that cannot be read, fails the whole feed.
    public func events(since: Date, until: Date) async -> Result<StripeEventFeed, StripeError> {
        var feed = StripeEventFeed()
        var seen = Set<String>()
        var snapshots = Set<String>()
        let gte = SourceNumber.saturatingInt64(since.timeIntervalSince1970.rounded(.down)) ?? 0
        let lt = SourceNumber.saturatingInt64(until.timeIntervalSince1970.rounded(.up)) ?? 0
        var base = "/v1/events?\(Self.encoded("created[gte]"))=\(gte)&\(Self.encoded("created[lt]"))=\(lt)&limit=\(Self.pageSize)"
        for (index, type) in Self.feedEventTypes.enumerated() {
            base += "&\(Self.encoded("types[\(index)]"))=\(Self.encoded(type))"
        }
        let read = await everyPage(
            base: base, id: "events", what: "events", decode: StripeEventList.decode(body:), elementID: \.id,
            maxPages: configuration.maxEventPages, tooMany: .tooManyEventPages(configuration.maxEventPages)
        ) { events in
            for event in events {
                if let id = event.id, !id.isEmpty, !seen.insert(id).inserted { continue }
                feed.events += 1
                if let customer = event.customer {
                    feed.customerIDs.append(customer)
                    if let refunded = event.refundedPurchase {
                        feed.refunds.append(StripeCustomerPurchase(customer: customer, purchase: refunded))
                    }
                    if let subscription = event.subscription?.id, snapshots.insert(subscription).inserted {
                        feed.purchases += event.statedPurchases
                    }
                } else {
                    feed.withoutCustomer += 1
                }
            }
        }
        return read.map { pages in
            feed.pages = pages
            logger.debug(
                "stripe events read",
                metadata: [
                    "stripe.events": "\(feed.events)", "stripe.events.without_customer": "\(feed.withoutCustomer)",
                    "stripe.pages": "\(pages)",
                ])
            return feed
        }
    }
}
