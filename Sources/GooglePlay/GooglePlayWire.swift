import Foundation
import SubreconCore

/// `purchases.subscriptionsv2.get`'s answer as Google sends it (reference/revenuecat.md §4.2). Every field is
/// optional; times stay text until the mapping reads them (RFC 3339, with or without fractional seconds), and an
/// unknown `subscriptionState` decodes as its text. Pure Foundation + SubreconCore (the fuzz target compiles it).
public struct SubscriptionPurchaseV2: Codable, Sendable, Hashable {
    public var kind: String?
    public var regionCode: String?
    /// Not set for pending subscriptions.
    public var startTime: String?
    public var subscriptionState: String?
    /// Deprecated by Google (use `lineItems[].latestSuccessfulOrderId`); kept for the record only.
    public var latestOrderId: String?
    public var linkedPurchaseToken: String?
    public var acknowledgementState: String?
    /// Present (an empty object) only for a test purchase: its presence is the signal.
    public var testPurchase: TestPurchase?
    public var lineItems: [SubscriptionLineItem]?
    /// The buyer's account the app handed Google at purchase (CONTRACT "Whose purchase it is"); nil when not sent.
    public var externalAccountIdentifiers: ExternalAccountIdentifiers?

    /// `testPurchase{}`: no fields; any object counts.
    public struct TestPurchase: Codable, Sendable, Hashable {
        public init() {}
        public init(from decoder: any Decoder) throws {}
        public func encode(to encoder: any Encoder) throws { _ = encoder.container(keyedBy: GoogleNoKeys.self) }
    }

    public init(
        kind: String? = "androidpublisher#subscriptionPurchaseV2", regionCode: String? = nil, startTime: String? = nil,
        subscriptionState: String? = nil, latestOrderId: String? = nil, linkedPurchaseToken: String? = nil,
        acknowledgementState: String? = nil, testPurchase: TestPurchase? = nil, lineItems: [SubscriptionLineItem]? = nil
    ) {
        self.kind = kind
        self.regionCode = regionCode
        self.startTime = startTime
        self.subscriptionState = subscriptionState
        self.latestOrderId = latestOrderId
        self.linkedPurchaseToken = linkedPurchaseToken
        self.acknowledgementState = acknowledgementState
        self.testPurchase = testPurchase
        self.lineItems = lineItems
    }

    /// True when the answer carries `testPurchase` (an object): a sandbox purchase.
    public var isTestPurchase: Bool { testPurchase != nil }
}

/// `externalAccountIdentifiers`: only `obfuscatedExternalAccountId` is read, strictly. Google documents it as the
/// app's obfuscated account id of at most 64 characters: a JSON string of 1...64 characters is kept exactly as sent;
/// anything else (a number, an object, null, empty, longer) is "not stated" (nil), never a failure of the answer:
/// the account only decides ownership, and an unreadable one never names a buyer. An `externalAccountIdentifiers`
/// that is not an object states nothing.
public struct ExternalAccountIdentifiers: Codable, Sendable, Hashable {
    public var obfuscatedExternalAccountId: String?

    public static let maxLength = 64

    public init(obfuscatedExternalAccountId: String?) { self.obfuscatedExternalAccountId = obfuscatedExternalAccountId }

    enum CodingKeys: String, CodingKey { case obfuscatedExternalAccountId }

    public init(from decoder: any Decoder) throws {
        let container = try? decoder.container(keyedBy: CodingKeys.self)
        obfuscatedExternalAccountId = Self.account(
            (try? container?.decodeIfPresent(String.self, forKey: .obfuscatedExternalAccountId)) ?? nil)
    }

    /// `text` when it can be an obfuscated account id (1...64 characters); nil otherwise.
    public static func account(_ text: String?) -> String? {
        guard let text, !text.isEmpty, text.count <= maxLength else { return nil }
        return text
    }
}

/// `SubscriptionPurchaseLineItem`.
public struct SubscriptionLineItem: Codable, Sendable, Hashable {
    public var productId: String?
    public var expiryTime: String?
    public var autoRenewingPlan: AutoRenewingPlan?
    public var prepaidPlan: PrepaidPlan?
    public var latestSuccessfulOrderId: String?

    public init(
        productId: String? = nil, expiryTime: String? = nil, autoRenewingPlan: AutoRenewingPlan? = nil,
        prepaidPlan: PrepaidPlan? = nil, latestSuccessfulOrderId: String? = nil
    ) {
        self.productId = productId
        self.expiryTime = expiryTime
        self.autoRenewingPlan = autoRenewingPlan
        self.prepaidPlan = prepaidPlan
        self.latestSuccessfulOrderId = latestSuccessfulOrderId
    }

    public struct AutoRenewingPlan: Codable, Sendable, Hashable {
        public var autoRenewEnabled: Bool?
        /// The price of the next renewal (CONTRACT "Finance figures": revenue at risk, restored value).
        public var recurringPrice: GoogleMoney?
        public init(autoRenewEnabled: Bool? = nil, recurringPrice: GoogleMoney? = nil) {
            self.autoRenewEnabled = autoRenewEnabled
            self.recurringPrice = recurringPrice
        }
    }

    public struct PrepaidPlan: Codable, Sendable, Hashable {
        public var allowExtendAfterTime: String?
        public init(allowExtendAfterTime: String? = nil) { self.allowExtendAfterTime = allowExtendAfterTime }
    }
}

/// Google's `Money`: `units` is an int64 written as a JSON string (a bare number is read too), `nanos` an int32 (a
/// JSON number, or a string of digits as proto3 JSON may write it: both are read).
public struct GoogleMoney: Codable, Sendable, Hashable {
    public var currencyCode: String?
    /// The whole units as sent (digits with an optional sign); nil when missing or not an integer.
    public var units: String?
    public var nanos: Int64?

    public init(currencyCode: String?, units: String?, nanos: Int64? = nil) {
        self.currencyCode = currencyCode
        self.units = units
        self.nanos = nanos
    }

    enum CodingKeys: String, CodingKey { case currencyCode, units, nanos }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        currencyCode = try? container.decodeIfPresent(String.self, forKey: .currencyCode)
        if let text = try? container.decodeIfPresent(String.self, forKey: .units) {
            units = text
        } else if let number = try? container.decodeIfPresent(Int64.self, forKey: .units) {
            units = String(number)
        } else {
            units = nil
        }
        if let number = try? container.decodeIfPresent(Int64.self, forKey: .nanos) {
            nanos = number
        } else if let text = try? container.decodeIfPresent(String.self, forKey: .nanos) {
            nanos = Self.integer(text)
        } else {
            nanos = nil
        }
        nanosUnreadable = nanos == nil && container.contains(.nanos) && !((try? container.decodeNil(forKey: .nanos)) ?? false)
    }

    /// True when `nanos` was sent but is not an integer (`"4.5"`, `"x"`, an object): the price is then unknown.
    public var nanosUnreadable = false

    /// Digits with an optional leading `-` (at most 18), as an integer; nil for anything else.
    static func integer(_ text: String) -> Int64? {
        let digits = text.hasPrefix("-") ? text.dropFirst() : Substring(text)
        guard !digits.isEmpty, digits.utf8.count <= 18,
            digits.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }), let value = Int64(digits)
        else { return nil }
        return text.hasPrefix("-") ? -value : value
    }
}

/// Google's JSON error body: `{"error": {"code": 404, "message": "...", "status": "NOT_FOUND", "errors": [...]}}`;
/// the OAuth token endpoint answers `{"error": "invalid_grant", "error_description": "..."}` instead.
public struct GoogleErrorBody: Codable, Sendable, Hashable {
    public var error: Detail?

    public struct Detail: Codable, Sendable, Hashable {
        public var code: Int?
        public var message: String?
        public var status: String?
        public var errors: [Reason]?
        public init(code: Int?, message: String?, status: String?, errors: [Reason]? = nil) {
            self.code = code
            self.message = message
            self.status = status
            self.errors = errors
        }
    }

    public struct Reason: Codable, Sendable, Hashable {
        public var domain: String?
        public var reason: String?
        public var message: String?
        public init(domain: String?, reason: String?, message: String?) {
            self.domain = domain
            self.reason = reason
            self.message = message
        }
    }

    public init(error: Detail?) { self.error = error }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        // An OAuth error's `error` is a string: no detail object.
        error = try? container.decodeIfPresent(Detail.self, forKey: .error)
    }

    enum CodingKeys: String, CodingKey { case error }
}

/// The OAuth token endpoint's answer: `access_token`, `expires_in` (seconds; a number, or digits in a string),
/// `token_type`; or an OAuth error (`error`, `error_description`).
public struct GoogleTokenResponse: Decodable, Sendable {
    public var accessToken: String?
    /// Seconds as sent, saturated into 0...Int64.max; nil when missing or unreadable.
    public var expiresIn: Int64?
    public var tokenType: String?
    /// The OAuth error code (`invalid_grant`, ...): not secret, named in failures.
    public var error: String?

    enum CodingKeys: String, CodingKey {
        case accessToken = "access_token"
        case expiresIn = "expires_in"
        case tokenType = "token_type"
        case error
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        accessToken = try? container.decodeIfPresent(String.self, forKey: .accessToken)
        tokenType = try? container.decodeIfPresent(String.self, forKey: .tokenType)
        error = try? container.decodeIfPresent(String.self, forKey: .error)
        if let number = try? container.decodeIfPresent(Double.self, forKey: .expiresIn) {
            expiresIn = number.isNaN ? nil : SourceNumber.saturatingInt64(max(0, number))
        } else if let text = try? container.decodeIfPresent(String.self, forKey: .expiresIn), let number = Double(text) {
            expiresIn = number.isNaN ? nil : SourceNumber.saturatingInt64(max(0, number))
        } else {
            expiresIn = nil
        }
    }
}

struct GoogleNoKeys: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

/// Decoding of Google's answers: bodies go through `SourceText.sanitizedJSON` first (invalid UTF-8 repaired, NUL
/// made visible), so no decoded text can hold a NUL.
public enum GoogleJSON {
    public static func subscription(_ body: Data) throws -> SubscriptionPurchaseV2 {
        try JSONDecoder().decode(SubscriptionPurchaseV2.self, from: SourceText.sanitizedJSON(body))
    }

    public static func error(_ body: Data) -> GoogleErrorBody? {
        try? JSONDecoder().decode(GoogleErrorBody.self, from: SourceText.sanitizedJSON(body))
    }

    public static func token(_ body: Data) -> GoogleTokenResponse? {
        try? JSONDecoder().decode(GoogleTokenResponse.self, from: SourceText.sanitizedJSON(body))
    }
}
