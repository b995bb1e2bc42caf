import Foundation
import SubreconCore

// Stripe's subscription object and list (`GET /v1/subscriptions`, `GET /v1/subscriptions/{id}`), decoded leniently.
//
// Every field is optional: a missing, null or unparsable field is nil (unknown), never a default, and the mapping
// decides what may be concluded without it. Numbers never trap: huge, fractional or string numbers are read through
// `Double`/`Int64` with range checks, and timestamps outside 1970...9999 are unknown. Unknown `status` values are
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
    /// Raw status (`active`, `trialing`, `past_due`, `paused`, `canceled`, `unpaid`, `incomplete`,
    /// `incomplete_expired`, or any newer value).
    public var status: String?
    public var livemode: Bool?
    public var cancelAtPeriodEnd: Bool?
    public var cancelAt: Date?
    public var canceledAt: Date?
    public var endedAt: Date?
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
        case id, object, customer, status, livemode, currency, items
        case latestInvoice = "latest_invoice"
        case cancelAtPeriodEnd = "cancel_at_period_end"
        case cancelAt = "cancel_at"
        case canceledAt = "canceled_at"
        case endedAt = "ended_at"
        case trialEnd = "trial_end"
        case startDate = "start_date"
        case currentPeriodStart = "current_period_start"
        case currentPeriodEnd = "current_period_end"
    }

    enum ListKeys: String, CodingKey {
        case data
        case hasMore = "has_more"
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = container.lenientString(.id)
        object = container.lenientString(.object)
        customer = container.lenientID(.customer)
        status = container.lenientString(.status)
        livemode = container.lenientBool(.livemode)
        cancelAtPeriodEnd = container.lenientBool(.cancelAtPeriodEnd)
        cancelAt = container.lenientTimestamp(.cancelAt)
        canceledAt = container.lenientTimestamp(.canceledAt)
        endedAt = container.lenientTimestamp(.endedAt)
        trialEnd = container.lenientTimestamp(.trialEnd)
        startDate = container.lenientTimestamp(.startDate)
        currentPeriodStart = container.lenientTimestamp(.currentPeriodStart)
        currentPeriodEnd = container.lenientTimestamp(.currentPeriodEnd)
        currency = container.lenientString(.currency)
        if let list = try? container.nestedContainer(keyedBy: ListKeys.self, forKey: .items) {
            items = try? list.decode([StripeSubscriptionItem].self, forKey: .data)
            itemsHaveMore = list.lenientBool(.hasMore)
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
        currentPeriodStart = container.lenientTimestamp(.currentPeriodStart)
        currentPeriodEnd = container.lenientTimestamp(.currentPeriodEnd)
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

private struct IDOnly: Decodable {
    var id: String?
    enum CodingKeys: String, CodingKey { case id }
    init(from decoder: any Decoder) throws {
        id = try? decoder.container(keyedBy: CodingKeys.self).decodeIfPresent(String.self, forKey: .id)
    }
}

extension KeyedDecodingContainer {
    /// A string; nil when missing, null or of another type.
    func lenientString(_ key: Key) -> String? {
        (try? decodeIfPresent(String.self, forKey: key)) ?? nil
    }

    /// A boolean; nil when missing, null or of another type (`"true"` is not a boolean).
    func lenientBool(_ key: Key) -> Bool? {
        (try? decodeIfPresent(Bool.self, forKey: key)) ?? nil
    }

    /// An id given as a string or as an expanded object's `id`.
    func lenientID(_ key: Key) -> String? {
        if let text = lenientString(key) { return text }
        return ((try? decodeIfPresent(IDOnly.self, forKey: key)) ?? nil)?.id
    }

    /// A whole number in `Int64`, given as a JSON number or a string of digits; nil for anything else
    /// (fractions, `1e300`, numbers beyond `Int64`).
    func lenientInteger(_ key: Key) -> Int64? {
        if let value = (try? decodeIfPresent(Int64.self, forKey: key)) ?? nil { return value }
        if let value = (try? decodeIfPresent(Double.self, forKey: key)) ?? nil {
            guard value.rounded(.towardZero) == value, let whole = SourceNumber.int64(value),
                abs(value) < 9_007_199_254_740_992
            else { return nil }
            return whole
        }
        if let text = (try? decodeIfPresent(String.self, forKey: key)) ?? nil {
            let trimmed = text.trimmingCharacters(in: .whitespaces)
            guard !trimmed.isEmpty, trimmed.utf8.count <= 19,
                trimmed.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) })
            else { return nil }
            return Int64(trimmed)
        }
        return nil
    }

    /// A Unix timestamp in seconds (a JSON number or a string of digits); nil when missing, null, unparsable, or
    /// outside 1970...9999.
    func lenientTimestamp(_ key: Key) -> Date? {
        let seconds: Double?
        if let value = (try? decodeIfPresent(Double.self, forKey: key)) ?? nil {
            seconds = value
        } else if let whole = lenientInteger(key) {
            seconds = Double(whole)
        } else {
            seconds = nil
        }
        guard let seconds, seconds.isFinite, seconds >= 0, seconds <= Double(SourceNumber.latestMilliseconds) / 1000 else {
            return nil
        }
        return SourceNumber.date(unixMilliseconds: seconds * 1000)
    }
}
