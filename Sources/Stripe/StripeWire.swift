import Foundation
import SubreconCore

// Stripe's subscription object and list (`GET /v1/subscriptions`, `GET /v1/subscriptions/{id}`), decoded leniently.
//
// Every field is optional: a missing, null or unparsable field is nil (unknown), never a default, and the mapping
// decides what may be concluded without it. Numbers never trap: huge, fractional or string numbers are read through
// `Double`/`Int64` with range checks. Timestamps are read strictly (`StrictDate.epochSeconds`): one present but
// not a whole Unix time in 1970...2200 is recorded in `unusableDates`, and the mapping fails the user closed. Unknown `status` values are
// kept as text (the mapping turns them into an error for the user). Only what cannot be read at all (a body that is
// not JSON, a list without `data`, an element that is not an object) fails the decode.
//
// This file imports Foundation and SubreconCore only: `scripts/fuzz` compiles it into the fuzz target.

/// `{"object": "list", "data": [...], "has_more": ..., "url": ...}`.
public typealias StripeSubscriptionList = StripeList<StripeSubscription>

/// A Stripe list (`{"object": "list", "data": [...], "has_more": ..., "url": ...}`) of subscriptions or events.
public struct StripeList<Element: Decodable & Sendable & Hashable>: Decodable, Sendable, Hashable {
    public var object: String?
    public var data: [Element]
    /// nil when not stated (the client fails closed: it cannot know whether the list is complete).
    public var hasMore: Bool?
    public var url: String?

    public init(object: String? = "list", data: [Element], hasMore: Bool?, url: String? = nil) {
        self.object = object
        self.data = data
        self.hasMore = hasMore
        self.url = url
    }

    enum CodingKeys: String, CodingKey {
        case object, data, url
        case hasMore = "has_more"
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        object = container.lenientString(.object)
        data = try container.decode([Element].self, forKey: .data)
        hasMore = container.lenientBool(.hasMore)
        url = container.lenientString(.url)
    }

    /// Decodes a list body after `SourceText.sanitizedJSON` (invalid UTF-8 repaired, NUL made visible).
    public static func decode(body: Data) throws -> StripeList<Element> {
        try JSONDecoder().decode(StripeList<Element>.self, from: SourceText.sanitizedJSON(body))
    }
}

/// One Stripe subscription (`"object": "subscription"`).
public struct StripeSubscription: Decodable, Sendable, Hashable {
    public var id: String?
    public var object: String?
    /// The customer id (`cus_…`), or the `id` of an expanded customer object.
    public var customer: String?
    /// The buyer's account the subscription's own `metadata.user_id` states (CONTRACT "Whose purchase it is", `StripeAccount`); nil when
    /// not stated.
    public var metadataUserID: String?
    /// The buyer's account the expanded customer's `metadata.user_id` states; nil when the customer is an id string
    /// (not expanded) or states none.
    public var customerUserID: String?
    /// `customer` came as a bare id string (`"cus_…"`), not the object.
    public var customerIsBareID = false
    /// Read from an answer that asked for the customer expanded (`StripeCustomerExpandable`): a bare id then leaves
    /// the buyer unknown (`statedBuyer`).
    public var customerExpansionAsked = false
    /// Raw status (`active`, `trialing`, `past_due`, `paused`, `canceled`, `unpaid`, `incomplete`,
    /// `incomplete_expired`, or any newer value).
    public var status: String?
    public var livemode: Bool?
    public var cancelAtPeriodEnd: Bool?
    public var cancelAt: Date?
    public var canceledAt: Date?
    public var endedAt: Date?
    /// `cancellation_details.reason` (`cancellation_requested`, `payment_disputed`, `payment_failed`, or newer); nil
    /// when not stated.
    public var cancellationReason: String?
    public var trialEnd: Date?
    public var startDate: Date?
    /// Top-level period (API versions before `2025-03-31.basil`).
    public var currentPeriodStart: Date?
    public var currentPeriodEnd: Date?
    public var currency: String?
    /// nil when `items` was missing or not a list.
    public var items: [StripeSubscriptionItem]?
    /// The embedded `items` list's `has_more`: nil when not stated. Unless false, `items` may be only the first page
    /// (the client reads the rest; the mapping refuses `true`).
    public var itemsHaveMore: Bool? = false
    /// `latest_invoice`: an id, or the expanded invoice; nil when missing, null or unreadable.
    public var latestInvoice: StripeInvoice?
    /// The timestamp fields sent but unusable (not a whole Unix time in 1970...2200, CONTRACT "Hostile answers and bounded work"): the mapping then
    /// fails the user closed rather than read them as absent.
    public var unusableDates: [String] = []

    public init(
        id: String?, object: String? = "subscription", customer: String? = nil, status: String?, livemode: Bool? = nil,
        cancelAtPeriodEnd: Bool? = nil, cancelAt: Date? = nil, canceledAt: Date? = nil, endedAt: Date? = nil,
        trialEnd: Date? = nil, startDate: Date? = nil, currentPeriodStart: Date? = nil, currentPeriodEnd: Date? = nil,
        currency: String? = nil, items: [StripeSubscriptionItem]?, latestInvoice: StripeInvoice? = nil
    ) {
        self.id = id
        self.object = object
        self.customer = customer
        self.status = status
        self.livemode = livemode
        self.cancelAtPeriodEnd = cancelAtPeriodEnd
        self.cancelAt = cancelAt
        self.canceledAt = canceledAt
        self.endedAt = endedAt
        self.trialEnd = trialEnd
        self.startDate = startDate
        self.currentPeriodStart = currentPeriodStart
        self.currentPeriodEnd = currentPeriodEnd
        self.currency = currency
        self.items = items
        self.latestInvoice = latestInvoice
    }

    enum CodingKeys: String, CodingKey {
        case id, object, customer, status, livemode, currency, items, metadata
        case latestInvoice = "latest_invoice"
        case cancelAtPeriodEnd = "cancel_at_period_end"
        case cancelAt = "cancel_at"
        case canceledAt = "canceled_at"
        case endedAt = "ended_at"
        case cancellationDetails = "cancellation_details"
        case trialEnd = "trial_end"
        case startDate = "start_date"
        case currentPeriodStart = "current_period_start"
        case currentPeriodEnd = "current_period_end"
    }

    enum CancellationKeys: String, CodingKey {
        case reason
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = container.lenientString(.id)
        object = container.lenientString(.object)
        customer = container.lenientID(.customer)
        metadataUserID = StripeAccount.userID(in: container, forKey: .metadata)
        customerUserID = StripeAccount.customerUserID(in: container, forKey: .customer)
        customerIsBareID = StripeAccount.isBareID(in: container, forKey: .customer)
        status = container.lenientString(.status)
        livemode = container.lenientBool(.livemode)
        cancelAtPeriodEnd = container.lenientBool(.cancelAtPeriodEnd)
        var unusable: [String] = []
        cancelAt = container.timestamp(.cancelAt, unusable: &unusable)
        canceledAt = container.timestamp(.canceledAt, unusable: &unusable)
        endedAt = container.timestamp(.endedAt, unusable: &unusable)
        cancellationReason = (try? container.nestedContainer(keyedBy: CancellationKeys.self, forKey: .cancellationDetails))?
            .lenientString(.reason)
        trialEnd = container.timestamp(.trialEnd, unusable: &unusable)
        startDate = container.timestamp(.startDate, unusable: &unusable)
        currentPeriodStart = container.timestamp(.currentPeriodStart, unusable: &unusable)
        currentPeriodEnd = container.timestamp(.currentPeriodEnd, unusable: &unusable)
        unusableDates = unusable
        currency = container.lenientString(.currency)
        if let list = container.embeddedList(.items, of: StripeSubscriptionItem.self) {
            (items, itemsHaveMore) = list
        } else {
            items = nil
        }
        latestInvoice = (try? container.decodeIfPresent(StripeInvoice.self, forKey: .latestInvoice)) ?? nil
    }

    /// Decodes a subscription body after `SourceText.sanitizedJSON`.
    public static func decode(body: Data) throws -> StripeSubscription {
        try JSONDecoder().decode(StripeSubscription.self, from: SourceText.sanitizedJSON(body))
    }
}

/// One item of a subscription (`"object": "subscription_item"`).
public struct StripeSubscriptionItem: Decodable, Sendable, Hashable {
    public var id: String?
    /// Item-level period (API versions from `2025-03-31.basil` on).
    public var currentPeriodStart: Date?
    public var currentPeriodEnd: Date?
    /// nil when missing or not a whole number in `Int64`.
    public var quantity: Int64?
    public var price: StripePrice?
    /// The period fields sent but unusable (CONTRACT "Hostile answers and bounded work"), as for `StripeSubscription.unusableDates`.
    public var unusableDates: [String] = []

    public init(
        id: String?, currentPeriodStart: Date? = nil, currentPeriodEnd: Date? = nil, quantity: Int64? = 1, price: StripePrice?
    ) {
        self.id = id
        self.currentPeriodStart = currentPeriodStart
        self.currentPeriodEnd = currentPeriodEnd
        self.quantity = quantity
        self.price = price
    }

    enum CodingKeys: String, CodingKey {
        case id, quantity, price
        case currentPeriodStart = "current_period_start"
        case currentPeriodEnd = "current_period_end"
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = container.lenientString(.id)
        var unusable: [String] = []
        currentPeriodStart = container.timestamp(.currentPeriodStart, unusable: &unusable)
        currentPeriodEnd = container.timestamp(.currentPeriodEnd, unusable: &unusable)
        unusableDates = unusable
        quantity = container.lenientInteger(.quantity)
        price = try? container.decodeIfPresent(StripePrice.self, forKey: .price)
    }
}

/// The price of an item (`"object": "price"`).
public struct StripePrice: Decodable, Sendable, Hashable {
    public var id: String?
    /// The product id (`prod_…`), or the `id` of an expanded product object.
    public var product: String?
    /// Minor units of `currency`; nil when missing, null (a `tiers` or custom price) or not a whole number.
    public var unitAmount: Int64?
    public var currency: String?
    /// `recurring` or `one_time`.
    public var type: String?

    public init(id: String?, product: String?, unitAmount: Int64? = nil, currency: String? = nil, type: String? = "recurring") {
        self.id = id
        self.product = product
        self.unitAmount = unitAmount
        self.currency = currency
        self.type = type
    }

    enum CodingKeys: String, CodingKey {
        case id, product, currency, type
        case unitAmount = "unit_amount"
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = container.lenientString(.id)
        product = container.lenientID(.product)
        unitAmount = container.lenientInteger(.unitAmount)
        currency = container.lenientString(.currency)
        type = container.lenientString(.type)
    }
}

/// Stripe's error body: `{"error": {"type": ..., "code": ..., "message": ...}}`.
public struct StripeErrorBody: Decodable, Sendable, Hashable {
    public var type: String?
    public var code: String?
    public var message: String?
    public var param: String?

    enum Outer: String, CodingKey { case error }
    enum CodingKeys: String, CodingKey { case type, code, message, param }

    public init(from decoder: any Decoder) throws {
        let outer = try decoder.container(keyedBy: Outer.self)
        let container = try outer.nestedContainer(keyedBy: CodingKeys.self, forKey: .error)
        type = container.lenientString(.type)
        code = container.lenientString(.code)
        message = container.lenientString(.message)
        param = container.lenientString(.param)
    }

    /// The error body of an answer, nil when it is not one.
    public static func decode(body: Data) -> StripeErrorBody? {
        try? JSONDecoder().decode(StripeErrorBody.self, from: SourceText.sanitizedJSON(body))
    }
}
