import Foundation
import SubreconCore

/// `purchases.products.get`'s answer (`ProductPurchase`) as Google sends it: a one-time product's purchase. Decoded
/// strictly: an int64 (`purchaseTimeMillis`) is a JSON string of digits or a JSON integer, read whole; an int32 a
/// JSON integer (or a string of digits, as proto3 JSON may write it); a value of another type, a fraction or a
/// number out of range fails the whole answer (CONTRACT "Hostile answers and bounded work": a malformed answer is a fetch error). Ranges are the
/// mapping's (`GooglePlayProductMapping`). Pure Foundation + SubreconCore (the fuzz target compiles it).
public struct ProductPurchase: Decodable, Sendable, Hashable {
    public var kind: String?
    public var productId: String?
    public var orderId: String?
    /// Unix milliseconds, as sent (not yet range-checked).
    public var purchaseTimeMillis: Int64?
    /// 0 purchased, 1 canceled, 2 pending.
    public var purchaseState: Int64?
    /// 0 yet to be consumed, 1 consumed.
    public var consumptionState: Int64?
    /// 0 yet to be acknowledged, 1 acknowledged.
    public var acknowledgementState: Int64?
    /// Absent for a real purchase; 0 test (licensed tester), 1 promo, 2 rewarded.
    public var purchaseType: Int64?
    public var quantity: Int64?
    public var regionCode: String?
    /// The buyer's account the app passed at purchase (`setObfuscatedAccountId`), top level in `ProductPurchase`.
    public var obfuscatedExternalAccountId: String?

    public init(
        kind: String? = "androidpublisher#productPurchase", productId: String? = nil, orderId: String? = nil,
        purchaseTimeMillis: Int64? = nil, purchaseState: Int64? = nil, consumptionState: Int64? = nil,
        acknowledgementState: Int64? = nil, purchaseType: Int64? = nil, quantity: Int64? = nil, regionCode: String? = nil,
        obfuscatedExternalAccountId: String? = nil
    ) {
        self.obfuscatedExternalAccountId = obfuscatedExternalAccountId
        self.kind = kind
        self.productId = productId
        self.orderId = orderId
        self.purchaseTimeMillis = purchaseTimeMillis
        self.purchaseState = purchaseState
        self.consumptionState = consumptionState
        self.acknowledgementState = acknowledgementState
        self.purchaseType = purchaseType
        self.quantity = quantity
        self.regionCode = regionCode
    }

    enum CodingKeys: String, CodingKey {
        case kind, productId, orderId, purchaseTimeMillis, purchaseState, consumptionState, acknowledgementState, purchaseType
        case quantity, regionCode, obfuscatedExternalAccountId
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        kind = try container.decodeIfPresent(String.self, forKey: .kind)
        productId = try container.decodeIfPresent(String.self, forKey: .productId)
        orderId = try container.decodeIfPresent(String.self, forKey: .orderId)
        regionCode = try container.decodeIfPresent(String.self, forKey: .regionCode)
        // Read as a subscription's is (`ExternalAccountIdentifiers.account`): only decides ownership, never fails the answer.
        obfuscatedExternalAccountId = ExternalAccountIdentifiers.account(
            (try? container.decodeIfPresent(String.self, forKey: .obfuscatedExternalAccountId)) ?? nil)
        purchaseTimeMillis = try Self.integer(container, .purchaseTimeMillis, range: Int64.min...Int64.max)
        let int32 = Int64(Int32.min)...Int64(Int32.max)
        purchaseState = try Self.integer(container, .purchaseState, range: int32)
        consumptionState = try Self.integer(container, .consumptionState, range: int32)
        acknowledgementState = try Self.integer(container, .acknowledgementState, range: int32)
        purchaseType = try Self.integer(container, .purchaseType, range: int32)
        quantity = try Self.integer(container, .quantity, range: int32)
    }

    /// A JSON integer, or a string of at most 18 digits with an optional `-`, within `range`; nil when absent or
    /// null; a thrown error for anything else.
    static func integer(
        _ container: KeyedDecodingContainer<CodingKeys>, _ key: CodingKeys, range: ClosedRange<Int64>
    ) throws -> Int64? {
        guard container.contains(key), try !container.decodeNil(forKey: key) else { return nil }
        let value: Int64?
        if let text = try? container.decode(String.self, forKey: key) {
            value = GoogleMoney.integer(text)
        } else {
            value = try container.decode(Int64.self, forKey: key)
        }
        guard let value, range.contains(value) else {
            throw DecodingError.dataCorruptedError(forKey: key, in: container, debugDescription: "not an integer in range")
        }
        return value
    }
}

extension GoogleJSON {
    public static func product(_ body: Data) throws -> ProductPurchase {
        try JSONDecoder().decode(ProductPurchase.self, from: SourceText.sanitizedJSON(body))
    }
}
