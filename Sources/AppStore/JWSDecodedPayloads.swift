import Foundation
import SubreconCore

/// A decoded `signedTransactionInfo` (apple.md §1.6). Dates arrive as Unix milliseconds.
///
/// Enumerations are kept as their raw values so an unknown value decodes instead of failing.
public struct JWSTransactionDecodedPayload: Sendable, Hashable, Codable {
    public var originalTransactionId: String?
    public var transactionId: String?
    public var webOrderLineItemId: String?
    public var bundleId: String?
    public var productId: String?
    public var subscriptionGroupIdentifier: String?
    public var purchaseDate: Date?
    public var originalPurchaseDate: Date?
    public var expiresDate: Date?
    public var quantity: Int?
    /// `Auto-Renewable Subscription`, `Non-Consumable`, `Consumable`, `Non-Renewing Subscription`.
    public var type: String?
    /// `PURCHASED` or `FAMILY_SHARED`.
    public var inAppOwnershipType: String?
    public var signedDate: Date?
    public var revocationReason: Int?
    public var revocationDate: Date?
    public var isUpgraded: Bool?
    public var offerType: Int?
    public var offerIdentifier: String?
    /// `Sandbox` or `Production` (others exist: `Xcode`, `LocalTesting`).
    public var environment: String?
    public var storefront: String?
    public var storefrontId: String?
    public var transactionReason: String?
    /// Price in milliunits of `currency`.
    public var price: Int64?
    public var currency: String?
    public var offerDiscountType: String?
    public var appTransactionId: String?
    public var revocationType: String?
    public var revocationPercentage: Int?
    /// The buyer's account the app handed Apple (CONTRACT "Whose purchase it is"); read strictly (`AppAccountToken`).
    public var appAccountToken: AppAccountToken?

    public init(
        originalTransactionId: String? = nil, transactionId: String? = nil, bundleId: String? = nil,
        productId: String? = nil, purchaseDate: Date? = nil, expiresDate: Date? = nil, type: String? = nil,
        signedDate: Date? = nil, revocationReason: Int? = nil, revocationDate: Date? = nil,
        environment: String? = nil, price: Int64? = nil, currency: String? = nil
    ) {
        self.originalTransactionId = originalTransactionId
        self.transactionId = transactionId
        self.bundleId = bundleId
        self.productId = productId
        self.purchaseDate = purchaseDate
        self.expiresDate = expiresDate
        self.type = type
        self.signedDate = signedDate
        self.revocationReason = revocationReason
        self.revocationDate = revocationDate
        self.environment = environment
        self.price = price
        self.currency = currency
    }
}

/// `appAccountToken`: a UUID the app set at purchase. Only a well-formed UUID string (8-4-4-4-12 hexadecimal digits,
/// either case) is an account, kept exactly as Apple signed it (CONTRACT "Whose purchase it is" compares it case-insensitively). Anything
/// else (a number, an object, an empty or malformed string) is "not stated": `uuid` is nil, and the payload still
/// decodes: the account decides ownership only, and an unreadable one must neither name a buyer nor fail the user.
public struct AppAccountToken: Sendable, Hashable, Codable {
    /// The UUID as signed; nil when what was signed is not one.
    public var uuid: String?

    public init(_ text: String?) { uuid = text.flatMap { Self.isUUID($0) ? $0 : nil } }

    public init(from decoder: any Decoder) throws {
        self.init((try? decoder.singleValueContainer().decode(String.self)) ?? nil)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        if let uuid { try container.encode(uuid) } else { try container.encodeNil() }
    }

    /// True for exactly 36 ASCII characters: hexadecimal digits with `-` at offsets 8, 13, 18 and 23.
    public static func isUUID(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard bytes.count == 36 else { return false }
        for (index, byte) in bytes.enumerated() {
            if [8, 13, 18, 23].contains(index) {
                guard byte == UInt8(ascii: "-") else { return false }
            } else {
                let isHex =
                    (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
                    || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(byte)
                guard isHex else { return false }
            }
        }
        return true
    }
}

/// A decoded `signedRenewalInfo` (apple.md §1.7). Dates arrive as Unix milliseconds.
public struct JWSRenewalInfoDecodedPayload: Sendable, Hashable, Codable {
    public var originalTransactionId: String?
    /// 0 = off, 1 = on.
    public var autoRenewStatus: Int?
    public var autoRenewProductId: String?
    public var productId: String?
    public var isInBillingRetryPeriod: Bool?
    public var gracePeriodExpiresDate: Date?
    /// Price of the next renewal in milliunits of `currency`.
    public var renewalPrice: Int64?
    public var currency: String?
    public var environment: String?
    public var signedDate: Date?
    /// 1 cancelled, 2 billing error, 3 price increase, 4 product unavailable, 5 other.
    public var expirationIntent: Int?
    public var priceIncreaseStatus: Int?
    public var recentSubscriptionStartDate: Date?
    public var renewalDate: Date?
    public var offerType: Int?
    public var offerIdentifier: String?

    public init(
        originalTransactionId: String? = nil, autoRenewStatus: Int? = nil, productId: String? = nil,
        isInBillingRetryPeriod: Bool? = nil, gracePeriodExpiresDate: Date? = nil, environment: String? = nil,
        signedDate: Date? = nil
    ) {
        self.originalTransactionId = originalTransactionId
        self.autoRenewStatus = autoRenewStatus
        self.productId = productId
        self.isInBillingRetryPeriod = isInBillingRetryPeriod
        self.gracePeriodExpiresDate = gracePeriodExpiresDate
        self.environment = environment
        self.signedDate = signedDate
    }
}

/// The part of any signed payload the verifier needs before decoding the real type.
struct JWSSignedDate: Decodable {
    var signedDate: Date?
}

extension JSONDecoder {
    /// Decoder for Apple payloads and bodies: dates are Unix milliseconds, 1970 to 2200 (`StrictDate`; anything else,
    /// huge, out of range, not finite, a string, is a decoding error that makes the payload unusable, CONTRACT "Hostile answers and bounded work").
    static var appStore: JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let container = try decoder.singleValueContainer()
            let milliseconds = try container.decode(Double.self)
            guard let date = StrictDate.epochMilliseconds(milliseconds) else {
                throw DecodingError.dataCorruptedError(
                    in: container, debugDescription: "date out of range (Unix milliseconds, 1970 to 2200)")
            }
            return date
        }
        return decoder
    }
}

/// The one way Apple JSON is decoded: the body or decoded JWS payload is sanitized first (`SourceText.sanitizedJSON`:
/// invalid UTF-8 repaired, NUL made visible), then decoded with `JSONDecoder.appStore`.
enum AppStoreJSON {
    static func decode<Value: Decodable>(_ type: Value.Type, from body: Data) throws -> Value {
        try JSONDecoder.appStore.decode(type, from: SourceText.sanitizedJSON(body))
    }
}
