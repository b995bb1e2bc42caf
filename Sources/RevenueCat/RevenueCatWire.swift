import Foundation
import SourceHTTP
import SubreconCore

/// The body of `GET /v1/subscribers/{app_user_id}` (RevenueCat REST API v1), decoded leniently:
/// unknown fields are ignored, unknown stores and period types are kept as text; dates are read strictly
/// (`StrictDate.parse`, fractional seconds or not): a date present but unusable fails the whole body.
public struct RevenueCatSubscriberResponse: Decodable, Sendable, Hashable {
    /// The server's notion of "now" for this answer.
    public var requestDate: Date?
    public var subscriber: RevenueCatSubscriber

    public init(requestDate: Date?, subscriber: RevenueCatSubscriber) {
        self.requestDate = requestDate
        self.subscriber = subscriber
    }

    enum CodingKeys: String, CodingKey {
        case requestDate = "request_date"
        case subscriber
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        requestDate = try container.decodeStrictDate(forKey: .requestDate)
        subscriber = try container.decode(RevenueCatSubscriber.self, forKey: .subscriber)
    }
}

/// The `subscriber` object of a v1 answer.
public struct RevenueCatSubscriber: Decodable, Sendable, Hashable {
    public var originalAppUserID: String?
    public var firstSeen: Date?
    public var lastSeen: Date?
    public var managementURL: String?
    /// Keyed by entitlement identifier; includes expired entitlements.
    public var entitlements: [String: RevenueCatEntitlement]
    /// Keyed by store product identifier.
    public var subscriptions: [String: RevenueCatSubscription]
    /// Keyed by store product identifier; one entry per purchase.
    public var nonSubscriptions: [String: [RevenueCatNonSubscription]]

    public init(
        originalAppUserID: String? = nil, firstSeen: Date? = nil, lastSeen: Date? = nil, managementURL: String? = nil,
        entitlements: [String: RevenueCatEntitlement] = [:], subscriptions: [String: RevenueCatSubscription] = [:],
        nonSubscriptions: [String: [RevenueCatNonSubscription]] = [:]
    ) {
        self.originalAppUserID = originalAppUserID
        self.firstSeen = firstSeen
        self.lastSeen = lastSeen
        self.managementURL = managementURL
        self.entitlements = entitlements
        self.subscriptions = subscriptions
        self.nonSubscriptions = nonSubscriptions
    }

    /// True when RevenueCat knows no purchase and no entitlement for this customer.
    public var isEmpty: Bool { entitlements.isEmpty && subscriptions.isEmpty && nonSubscriptions.isEmpty }

    enum CodingKeys: String, CodingKey {
        case originalAppUserID = "original_app_user_id"
        case firstSeen = "first_seen"
        case lastSeen = "last_seen"
        case managementURL = "management_url"
        case entitlements, subscriptions
        case nonSubscriptions = "non_subscriptions"
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        originalAppUserID = try container.decodeIfPresent(String.self, forKey: .originalAppUserID)
        firstSeen = try container.decodeStrictDate(forKey: .firstSeen)
        lastSeen = try container.decodeStrictDate(forKey: .lastSeen)
        managementURL = try container.decodeIfPresent(String.self, forKey: .managementURL)
        entitlements = try container.decodeIfPresent([String: RevenueCatEntitlement].self, forKey: .entitlements) ?? [:]
        subscriptions = try container.decodeIfPresent([String: RevenueCatSubscription].self, forKey: .subscriptions) ?? [:]
        nonSubscriptions =
            try container.decodeIfPresent([String: [RevenueCatNonSubscription]].self, forKey: .nonSubscriptions) ?? [:]
    }
}

/// One entitlement of a subscriber. `expires_date: null` means lifetime; a missing key means nothing is known.
public struct RevenueCatEntitlement: Decodable, Sendable, Hashable {
    public var expires: StatedExpiry
    /// The stated expiry date, if any.
    public var expiresDate: Date? {
        if case .at(let date) = expires { return date }
        return nil
    }
    public var gracePeriodExpiresDate: Date?
    /// May be temporarily missing when RevenueCat had trouble validating with the store.
    public var productIdentifier: String?
    public var purchaseDate: Date?

    /// - Parameter expiresDate: nil is an explicit `null` (lifetime), as RevenueCat writes it.
    public init(
        expiresDate: Date? = nil, gracePeriodExpiresDate: Date? = nil, productIdentifier: String?,
        purchaseDate: Date? = nil
    ) {
        self.expires = expiresDate.map(StatedExpiry.at) ?? .never
        self.gracePeriodExpiresDate = gracePeriodExpiresDate
        self.productIdentifier = productIdentifier
        self.purchaseDate = purchaseDate
    }

    enum CodingKeys: String, CodingKey {
        case expiresDate = "expires_date"
        case gracePeriodExpiresDate = "grace_period_expires_date"
        case productIdentifier = "product_identifier"
        case purchaseDate = "purchase_date"
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        if !container.contains(.expiresDate) {
            expires = .unstated
        } else if try container.decodeNil(forKey: .expiresDate) {
            expires = .never
        } else {
            expires = try container.decodeStrictDate(forKey: .expiresDate).map(StatedExpiry.at) ?? .unstated
        }
        gracePeriodExpiresDate = try container.decodeStrictDate(forKey: .gracePeriodExpiresDate)
        productIdentifier = try container.decodeIfPresent(String.self, forKey: .productIdentifier).flatMap { $0.isEmpty ? nil : $0 }
        purchaseDate = try container.decodeStrictDate(forKey: .purchaseDate)
    }
}

/// A price as RevenueCat states it (`{amount, currency}`); amount may be 0 for trials.
public struct RevenueCatPrice: Decodable, Sendable, Hashable {
    public var amount: Decimal
    public var currency: String

    public init(amount: Decimal, currency: String) {
        self.amount = amount
        self.currency = currency
    }

    /// The largest amount believed: a price beyond it, below zero (CONTRACT "Hostile answers and bounded work") or NaN is not a price.
    static let maxAmount = Decimal(1_000_000_000_000)

    enum CodingKeys: String, CodingKey { case amount, currency }

    /// Throws when the amount is not a number within 0...`maxAmount`; the subscription then has no known price
    /// (`price` is decoded with `try?`), which the finance figures count as unknown.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        amount = try container.decode(Decimal.self, forKey: .amount)
        currency = try container.decode(String.self, forKey: .currency)
        guard !amount.isNaN, amount <= Self.maxAmount, amount >= 0 else {
            throw DecodingError.dataCorruptedError(forKey: .amount, in: container, debugDescription: "price out of range")
        }
    }

    var money: Money { Money(amount: amount, currency: currency) }
}

/// One auto-renewing (or promotional) subscription of a subscriber.
public struct RevenueCatSubscription: Decodable, Sendable, Hashable {
    /// Raw store name (`app_store`, `play_store`, `stripe`, `promotional`, or any newer value).
    public var store: String
    /// nil when the answer did not say.
    public var isSandbox: Bool?
    /// Raw period type (`normal`, `trial`, `intro`, `PROMOTIONAL`, ...); kept as sent.
    public var periodType: String?
    public var purchaseDate: Date?
    public var originalPurchaseDate: Date?
    public var expiresDate: Date?
    public var gracePeriodExpiresDate: Date?
    public var refundedAt: Date?
    public var unsubscribeDetectedAt: Date?
    public var billingIssuesDetectedAt: Date?
    public var autoResumeDate: Date?
    public var ownershipType: String?
    public var storeTransactionID: String?
    public var price: RevenueCatPrice?

    public init(
        store: String, isSandbox: Bool? = false, periodType: String? = nil, purchaseDate: Date? = nil,
        originalPurchaseDate: Date? = nil, expiresDate: Date? = nil, gracePeriodExpiresDate: Date? = nil,
        refundedAt: Date? = nil, unsubscribeDetectedAt: Date? = nil, billingIssuesDetectedAt: Date? = nil,
        autoResumeDate: Date? = nil, ownershipType: String? = nil, storeTransactionID: String? = nil,
        price: RevenueCatPrice? = nil
    ) {
        self.store = store
        self.isSandbox = isSandbox
        self.periodType = periodType
        self.purchaseDate = purchaseDate
        self.originalPurchaseDate = originalPurchaseDate
        self.expiresDate = expiresDate
        self.gracePeriodExpiresDate = gracePeriodExpiresDate
        self.refundedAt = refundedAt
        self.unsubscribeDetectedAt = unsubscribeDetectedAt
        self.billingIssuesDetectedAt = billingIssuesDetectedAt
        self.autoResumeDate = autoResumeDate
        self.ownershipType = ownershipType
        self.storeTransactionID = storeTransactionID
        self.price = price
    }

    enum CodingKeys: String, CodingKey {
        case store
        case isSandbox = "is_sandbox"
        case periodType = "period_type"
        case purchaseDate = "purchase_date"
        case originalPurchaseDate = "original_purchase_date"
        case expiresDate = "expires_date"
        case gracePeriodExpiresDate = "grace_period_expires_date"
        case refundedAt = "refunded_at"
        case unsubscribeDetectedAt = "unsubscribe_detected_at"
        case billingIssuesDetectedAt = "billing_issues_detected_at"
        case autoResumeDate = "auto_resume_date"
        case ownershipType = "ownership_type"
        case storeTransactionID = "store_transaction_id"
        case price
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        store = try container.decodeIfPresent(String.self, forKey: .store) ?? "unknown"
        isSandbox = try container.decodeIfPresent(Bool.self, forKey: .isSandbox)
        periodType = try container.decodeIfPresent(String.self, forKey: .periodType)
        purchaseDate = try container.decodeStrictDate(forKey: .purchaseDate)
        originalPurchaseDate = try container.decodeStrictDate(forKey: .originalPurchaseDate)
        expiresDate = try container.decodeStrictDate(forKey: .expiresDate)
        gracePeriodExpiresDate = try container.decodeStrictDate(forKey: .gracePeriodExpiresDate)
        refundedAt = try container.decodeStrictDate(forKey: .refundedAt)
        unsubscribeDetectedAt = try container.decodeStrictDate(forKey: .unsubscribeDetectedAt)
        billingIssuesDetectedAt = try container.decodeStrictDate(forKey: .billingIssuesDetectedAt)
        autoResumeDate = try container.decodeStrictDate(forKey: .autoResumeDate)
        ownershipType = try container.decodeIfPresent(String.self, forKey: .ownershipType)
        storeTransactionID = try container.decodeIfPresent(String.self, forKey: .storeTransactionID)
        price = (try? container.decodeIfPresent(RevenueCatPrice.self, forKey: .price)) ?? nil
    }
}

/// One one-time purchase (consumable, non-consumable, non-renewing) of a subscriber.
public struct RevenueCatNonSubscription: Decodable, Sendable, Hashable {
    public var id: String?
    public var store: String
    /// nil when the answer did not say.
    public var isSandbox: Bool?
    public var purchaseDate: Date?
    /// Not in the v1 schema, honoured when present.
    public var refundedAt: Date?
    public var storeTransactionID: String?
    public var price: RevenueCatPrice?

    public init(
        id: String? = nil, store: String, isSandbox: Bool? = false, purchaseDate: Date? = nil, refundedAt: Date? = nil,
        storeTransactionID: String? = nil, price: RevenueCatPrice? = nil
    ) {
        self.id = id
        self.store = store
        self.isSandbox = isSandbox
        self.purchaseDate = purchaseDate
        self.refundedAt = refundedAt
        self.storeTransactionID = storeTransactionID
        self.price = price
    }

    enum CodingKeys: String, CodingKey {
        case id, store, price
        case isSandbox = "is_sandbox"
        case purchaseDate = "purchase_date"
        case refundedAt = "refunded_at"
        case storeTransactionID = "store_transaction_id"
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decodeIfPresent(String.self, forKey: .id)
        store = try container.decodeIfPresent(String.self, forKey: .store) ?? "unknown"
        isSandbox = try container.decodeIfPresent(Bool.self, forKey: .isSandbox)
        purchaseDate = try container.decodeStrictDate(forKey: .purchaseDate)
        refundedAt = try container.decodeStrictDate(forKey: .refundedAt)
        storeTransactionID = try container.decodeIfPresent(String.self, forKey: .storeTransactionID)
        price = (try? container.decodeIfPresent(RevenueCatPrice.self, forKey: .price)) ?? nil
    }
}

/// A v1 error body: `{"code": 7225, "message": "Invalid API key"}`; `code` may be a number or a string.
public struct RevenueCatErrorBody: Decodable, Sendable, Hashable {
    public var code: String?
    public var message: String?
    /// Milliseconds to wait before retrying, when the server says so (429): a JSON number (integer or not, any
    /// size: `1e19` stays `1e19`) or a numeric string (`"  5 "`); nil when absent or unreadable. Never rounded or
    /// converted to an integer here; `RequestedWait` judges it.
    public var backoffMS: Double?

    enum CodingKeys: String, CodingKey {
        case code, message
        case backoffMS = "backoff_ms"
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        if let number = try? container.decodeIfPresent(Int.self, forKey: .code) {
            code = String(number)
        } else {
            code = try? container.decodeIfPresent(String.self, forKey: .code)
        }
        message = try? container.decodeIfPresent(String.self, forKey: .message)
        if let millis = try? container.decodeIfPresent(Double.self, forKey: .backoffMS) {
            backoffMS = millis
        } else if let text = try? container.decodeIfPresent(String.self, forKey: .backoffMS) {
            backoffMS = WaitText.number(text)
        } else {
            backoffMS = nil  // absent, null, or a number no Double holds (1e400): the client's own backoff
        }
    }
}

extension RevenueCatSubscriberResponse {
    /// Decodes a subscriber body after `SourceText.sanitizedJSON`: invalid UTF-8 repaired, NUL made visible, so no
    /// text from RevenueCat can carry a NUL into the ledger, the logs or the reports.
    public static func decode(body: Data) throws -> RevenueCatSubscriberResponse {
        try JSONDecoder().decode(RevenueCatSubscriberResponse.self, from: SourceText.sanitizedJSON(body))
    }
}

extension RevenueCatErrorBody {
    /// Decodes an error body (sanitized like a subscriber body); nil when it is not one.
    public static func decode(body: Data) -> RevenueCatErrorBody? {
        try? JSONDecoder().decode(RevenueCatErrorBody.self, from: SourceText.sanitizedJSON(body))
    }
}

extension KeyedDecodingContainer {
    /// A whole RFC 3339 instant in 1970...2200 (`StrictDate.parse`); nil when absent or null; an error when present but
    /// anything else (trailing bytes, an impossible date, out of range): the body is then unusable (CONTRACT "Hostile answers and bounded work").
    func decodeStrictDate(forKey key: Key) throws -> Date? {
        guard let text = try decodeIfPresent(String.self, forKey: key) else { return nil }
        guard let date = StrictDate.parse(text) else {
            throw DecodingError.dataCorruptedError(
                forKey: key, in: self, debugDescription: "not an RFC 3339 date in 1970...2200: \(text.prefix(40))")
        }
        return date
    }
}
