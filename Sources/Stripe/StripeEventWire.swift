import Foundation
import SubreconCore

// Stripe's events list (`GET /v1/events`), decoded leniently for the store feed (CONTRACT "Which users a run asks about").
//
// Only what finds the user is read: the event's `id` (deduplication), `type`, `created`, `livemode`, and from
// `data.object` its `object`, `id` and `customer` (a `cus_…` string, or an expanded customer's `id`); a charge is
// also read whole (`StripeCharge`, as the refund lookup reads it: `refunded`, `amount_refunded`, `currency`,
// `payment_intent`, `livemode`, `refunds`). Every field is
// optional: missing, null or of another type is nil. `created` is read like every Stripe timestamp (strict, `StrictDate`:
// 1970–2200, else nil). Only a body that is not JSON, a list without `data`, or an element of `data` that is not
// an object fails the decode.
//
// This file imports Foundation and SubreconCore only: `scripts/fuzz` compiles it into the fuzz target.

/// `{"object": "list", "data": [event, ...], "has_more": ..., "url": "/v1/events"}`.
public typealias StripeEventList = StripeList<StripeEvent>

/// One Stripe event (`"object": "event"`), reduced to what names the customer.
public struct StripeEvent: Decodable, Sendable, Hashable {
    /// `evt_…`; the feed deduplicates by it.
    public var id: String?
    public var object: String?
    /// `customer.subscription.updated`, `charge.refunded`, …
    public var type: String?
    public var created: Date?
    /// True when `created` was sent but is not a whole Unix time in 1970...2200 (CONTRACT "Hostile answers and bounded work").
    public var createdUnusable = false
    public var livemode: Bool?
    /// `data.object.object`: `subscription`, `charge`, `dispute`, …
    public var objectType: String?
    /// `data.object.id`.
    public var objectID: String?
    /// `data.object.customer`: the customer id, or the `id` of an expanded customer; nil when the object names none
    /// (a guest charge, a dispute).
    public var customer: String?
    /// What a charge's snapshot (`data.object` of a `charge.*` event) states about its refunds; nil for other objects.
    public var charge: StripeCharge?
    /// The subscription's snapshot (`data.object` of a `customer.subscription.*` event), read as a lookup reads a
    /// subscription (its `metadata.user_id` included); nil for other objects.
    public var subscription: StripeSubscription?

    public init(
        id: String?, object: String? = "event", type: String?, created: Date?, livemode: Bool? = true, objectType: String?,
        objectID: String?, customer: String?, charge: StripeCharge? = nil
    ) {
        self.id = id
        self.object = object
        self.type = type
        self.created = created
        self.livemode = livemode
        self.objectType = objectType
        self.objectID = objectID
        self.customer = customer
        self.charge = charge
    }

    enum CodingKeys: String, CodingKey { case id, object, type, created, livemode, data }
    enum DataKeys: String, CodingKey { case object }
    enum ObjectKeys: String, CodingKey { case id, object, customer }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = container.lenientString(.id)
        object = container.lenientString(.object)
        type = container.lenientString(.type)
        let stamp = container.stripeTimestamp(.created)
        created = stamp.date
        createdUnusable = stamp == .unusable
        livemode = container.lenientBool(.livemode)
        let inner = (try? container.nestedContainer(keyedBy: DataKeys.self, forKey: .data))
            .flatMap { try? $0.nestedContainer(keyedBy: ObjectKeys.self, forKey: .object) }
        objectType = inner?.lenientString(.object)
        objectID = inner?.lenientString(.id)
        customer = inner?.lenientID(.customer).flatMap { $0.isEmpty ? nil : $0 }
        charge =
            objectType == "charge"
            ? (try? container.nestedContainer(keyedBy: DataKeys.self, forKey: .data))
                .flatMap { (try? $0.decodeIfPresent(StripeCharge.self, forKey: .object)) ?? nil }
            : nil
        subscription =
            objectType == "subscription"
            ? (try? container.nestedContainer(keyedBy: DataKeys.self, forKey: .data))
                .flatMap { (try? $0.decodeIfPresent(StripeSubscription.self, forKey: .object)) ?? nil }
            : nil
    }

    /// The purchases a subscription event's snapshot states (CONTRACT "Whose purchase it is": `FeedEntries.purchases`), mapped as a lookup
    /// maps the subscription (`StripeInventoryPage.purchases`), with the customer it names; empty for other events.
    public var statedPurchases: [StripeCustomerPurchase] {
        guard let subscription else { return [] }
        var named = subscription
        if named.customer == nil { named.customer = customer }
        return StripeInventoryPage.purchases([named])
    }

    /// The refunded purchase a `charge.refunded` event states (CONTRACT "Finance figures"), or nil. Only a fully refunded charge
    /// (`refunded: true`) is a refunded purchase: a partial refund is not. Keyed by the charge's payment intent
    /// (`pi_…`), else the charge (`ch_…`), the id the Stripe lookup keys the same refund by (`refundTransactionID`);
    /// refunded at the latest `created` of its `succeeded` refunds, else the event's `created`; the amount is
    /// `amount_refunded` in the currency's minor units (unknown without a known currency or out of the range the
    /// lookup accepts, `0...StripeMapping.maxUnitAmount`); `isSandbox` is `!livemode` (the charge's, else the
    /// event's; unknown when neither says).
    public var refundedPurchase: PurchaseFact? {
        guard type == "charge.refunded", let charge, charge.refunded == true else { return nil }
        let chargeID = (charge.id ?? objectID).flatMap { $0.isEmpty ? nil : $0 }
        guard let key = charge.paymentIntent.flatMap({ $0.isEmpty ? nil : $0 }) ?? chargeID else { return nil }
        let succeeded = (charge.refunds ?? []).filter { $0.status == "succeeded" }
        // A date sent but unusable is never replaced by another (CONTRACT "Hostile answers and bounded work"): no refund is read from this event.
        guard !createdUnusable, !succeeded.contains(where: \.createdUnusable) else { return nil }
        guard let refundedAt = succeeded.compactMap(\.created).max() ?? created else { return nil }
        let price = StripeRefundMapping.price(of: [charge])
        var fact = PurchaseFact(
            origin: .stripe, productID: "", store: .stripe, kind: .unstated, isSandbox: (charge.livemode ?? livemode).map { !$0 },
            refundedAt: refundedAt, storeTransactionID: chargeID, price: price, line: nil,
            // A refund is a fact about the purchase it names; the charge states no buyer of its own.
            buyer: .unstated)
        fact.refundTransactionID = key
        return fact
    }
}
