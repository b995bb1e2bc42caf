import Foundation

/// The simulator's own encoding of RevenueCat's v1 subscriber answer, written independently of the client's
/// decoder so that tests check one against the other. Dates without fractional seconds, absent values as `null`,
/// like the real API.
struct RevenueCatWireSubscriberResponse: Encodable {
    var requestDate: Date
    var subscriber: SimulatedSubscriber
    var appUserID: String
    var entitlements: [SimulatedEntitlement]

    enum Keys: String, CodingKey {
        case request_date, request_date_ms, subscriber
        case original_app_user_id, original_application_version, original_purchase_date, first_seen, last_seen
        case management_url, entitlements, subscriptions, non_subscriptions, other_purchases, subscriber_attributes
    }

    func encode(to encoder: any Encoder) throws {
        var top = encoder.container(keyedBy: Keys.self)
        try top.encode(WireDate.string(requestDate), forKey: .request_date)
        try top.encode(Int64((requestDate.timeIntervalSince1970 * 1000).rounded()), forKey: .request_date_ms)
        var body = top.nestedContainer(keyedBy: Keys.self, forKey: .subscriber)
        try body.encode(subscriber.originalAppUserID ?? appUserID, forKey: .original_app_user_id)
        try body.encodeNil(forKey: .original_application_version)
        try body.encodeNil(forKey: .original_purchase_date)
        let firstSeen = subscriber.firstSeen ?? requestDate
        try body.encode(WireDate.string(firstSeen), forKey: .first_seen)
        try body.encode(WireDate.string(requestDate), forKey: .last_seen)
        try body.encodeNil(forKey: .management_url)
        var entitlementMap = body.nestedContainer(keyedBy: DynamicKey.self, forKey: .entitlements)
        for entitlement in entitlements {
            try entitlementMap.encode(WireEntitlement(entitlement), forKey: DynamicKey(entitlement.identifier))
        }
        var subscriptionMap = body.nestedContainer(keyedBy: DynamicKey.self, forKey: .subscriptions)
        for subscription in subscriber.subscriptions {
            try subscriptionMap.encode(WireSubscription(subscription), forKey: DynamicKey(subscription.productID))
        }
        var purchaseMap = body.nestedContainer(keyedBy: DynamicKey.self, forKey: .non_subscriptions)
        let grouped = Dictionary(grouping: subscriber.nonSubscriptions, by: \.productID)
        for productID in grouped.keys.sorted() {
            try purchaseMap.encode(grouped[productID, default: []].map(WirePurchase.init), forKey: DynamicKey(productID))
        }
        _ = body.nestedContainer(keyedBy: DynamicKey.self, forKey: .other_purchases)
        _ = body.nestedContainer(keyedBy: DynamicKey.self, forKey: .subscriber_attributes)
    }
}

struct DynamicKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(_ string: String) { stringValue = string }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

enum WireDate {
    /// `2026-03-01T02:00:05Z`: whole seconds, UTC.
    static func string(_ date: Date) -> String {
        Date(timeIntervalSince1970: date.timeIntervalSince1970.rounded(.down)).formatted(style)
    }

    private static let style = Date.ISO8601FormatStyle(timeZone: TimeZone(secondsFromGMT: 0)!)

    static func encode<K: CodingKey>(_ date: Date?, _ key: K, in container: inout KeyedEncodingContainer<K>) throws {
        if let date { try container.encode(string(date), forKey: key) } else { try container.encodeNil(forKey: key) }
    }
}

private struct WirePrice: Encodable {
    var amount: Decimal
    var currency: String
    init?(_ price: SimulatedPrice?) {
        guard let price else { return nil }
        amount = price.amount
        currency = price.currency
    }
}

private struct WireEntitlement: Encodable {
    var entitlement: SimulatedEntitlement
    init(_ entitlement: SimulatedEntitlement) { self.entitlement = entitlement }

    enum Keys: String, CodingKey { case expires_date, grace_period_expires_date, product_identifier, purchase_date }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        try WireDate.encode(entitlement.expiresDate, .expires_date, in: &container)
        try WireDate.encode(entitlement.gracePeriodExpiresDate, .grace_period_expires_date, in: &container)
        try container.encode(entitlement.productIdentifier, forKey: .product_identifier)
        try WireDate.encode(entitlement.purchaseDate, .purchase_date, in: &container)
    }
}

private struct WireSubscription: Encodable {
    var subscription: SimulatedSubscription
    init(_ subscription: SimulatedSubscription) { self.subscription = subscription }

    enum Keys: String, CodingKey {
        case auto_resume_date, billing_issues_detected_at, display_name, expires_date, grace_period_expires_date
        case is_sandbox, original_purchase_date, ownership_type, period_type, price, purchase_date, refunded_at
        case store, store_transaction_id, unsubscribe_detected_at
    }

    func encode(to encoder: any Encoder) throws {
        let s = subscription
        var container = encoder.container(keyedBy: Keys.self)
        try WireDate.encode(s.autoResumeDate, .auto_resume_date, in: &container)
        try WireDate.encode(s.billingIssuesDetectedAt, .billing_issues_detected_at, in: &container)
        try container.encode(s.productID, forKey: .display_name)
        try WireDate.encode(s.expiresDate, .expires_date, in: &container)
        try WireDate.encode(s.gracePeriodExpiresDate, .grace_period_expires_date, in: &container)
        try container.encode(s.isSandbox, forKey: .is_sandbox)
        try WireDate.encode(s.originalPurchaseDate ?? s.purchaseDate, .original_purchase_date, in: &container)
        try container.encode(s.ownershipType, forKey: .ownership_type)
        try container.encode(s.periodType, forKey: .period_type)
        if let price = WirePrice(s.price) { try container.encode(price, forKey: .price) }
        try WireDate.encode(s.purchaseDate, .purchase_date, in: &container)
        try WireDate.encode(s.refundedAt, .refunded_at, in: &container)
        try container.encode(s.store, forKey: .store)
        if let id = s.storeTransactionID {
            try container.encode(id, forKey: .store_transaction_id)
        } else {
            try container.encodeNil(forKey: .store_transaction_id)
        }
        try WireDate.encode(s.unsubscribeDetectedAt, .unsubscribe_detected_at, in: &container)
    }
}

private struct WirePurchase: Encodable {
    var purchase: SimulatedNonSubscription
    init(_ purchase: SimulatedNonSubscription) { self.purchase = purchase }

    enum Keys: String, CodingKey {
        case id, display_name, is_sandbox, price, purchase_date, store, store_transaction_id
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(purchase.id, forKey: .id)
        try container.encode(purchase.productID, forKey: .display_name)
        try container.encode(purchase.isSandbox, forKey: .is_sandbox)
        if let price = WirePrice(purchase.price) { try container.encode(price, forKey: .price) }
        try WireDate.encode(purchase.purchaseDate, .purchase_date, in: &container)
        try container.encode(purchase.store, forKey: .store)
        if let id = purchase.storeTransactionID {
            try container.encode(id, forKey: .store_transaction_id)
        } else {
            try container.encodeNil(forKey: .store_transaction_id)
        }
    }
}
