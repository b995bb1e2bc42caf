import Foundation
import SubreconCore

/// `purchases.voidedpurchases.list`'s answer as Google sends it: `voidedPurchases`, `tokenPagination.nextPageToken`
/// and `pageInfo`. Every field is optional and decoded leniently (a field of the wrong type is absent, not a failed
/// page); int64 fields written as JSON strings (or bare numbers) are read saturating. Pure Foundation +
/// SubreconCore (the fuzz target compiles it).
public struct VoidedPurchasesListResponse: Decodable, Sendable, Hashable {
    public var voidedPurchases: [VoidedPurchase]?
    public var tokenPagination: TokenPagination?
    public var pageInfo: PageInfo?

    public struct TokenPagination: Decodable, Sendable, Hashable {
        public var nextPageToken: String?
        public var previousPageToken: String?

        public init(nextPageToken: String? = nil, previousPageToken: String? = nil) {
            self.nextPageToken = nextPageToken
            self.previousPageToken = previousPageToken
        }

        enum CodingKeys: String, CodingKey { case nextPageToken, previousPageToken }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            nextPageToken = try? container.decodeIfPresent(String.self, forKey: .nextPageToken)
            previousPageToken = try? container.decodeIfPresent(String.self, forKey: .previousPageToken)
        }
    }

    public struct PageInfo: Decodable, Sendable, Hashable {
        public var totalResults: Int64?
        public var resultPerPage: Int64?
        public var startIndex: Int64?

        enum CodingKeys: String, CodingKey { case totalResults, resultPerPage, startIndex }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            totalResults = GoogleInt64.decode(container, .totalResults)
            resultPerPage = GoogleInt64.decode(container, .resultPerPage)
            startIndex = GoogleInt64.decode(container, .startIndex)
        }
    }

    enum CodingKeys: String, CodingKey { case voidedPurchases, tokenPagination, pageInfo }

    public init(voidedPurchases: [VoidedPurchase]?, tokenPagination: TokenPagination? = nil) {
        self.voidedPurchases = voidedPurchases
        self.tokenPagination = tokenPagination
        self.pageInfo = nil
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        // The list itself must be a list when present: a page whose entries cannot be read is not an empty page.
        voidedPurchases = try container.decodeIfPresent([VoidedPurchase].self, forKey: .voidedPurchases)
        tokenPagination = try? container.decodeIfPresent(TokenPagination.self, forKey: .tokenPagination)
        pageInfo = try? container.decodeIfPresent(PageInfo.self, forKey: .pageInfo)
    }

    /// The continuation token, nil when absent or empty (the last page).
    public var nextPageToken: String? {
        guard let token = tokenPagination?.nextPageToken, !token.isEmpty else { return nil }
        return token
    }
}

/// One `VoidedPurchase`: a purchase that was canceled, refunded or charged back. `purchaseToken` finds the user;
/// `orderId` identifies the voided order (a subscription's renewal orders share one purchase token).
public struct VoidedPurchase: Decodable, Sendable, Hashable {
    public var kind: String?
    public var purchaseToken: String?
    public var orderId: String?
    /// Unix milliseconds (int64 sent as a string), saturated into Int64.
    public var purchaseTimeMillis: Int64?
    /// Unix milliseconds (int64 sent as a string), saturated into Int64.
    public var voidedTimeMillis: Int64?
    /// 0 user, 1 developer, 2 Google.
    public var voidedSource: Int64?
    /// 0 other, 1 remorse, 2 not received, 3 defective, 4 accidental purchase, 5 fraud, 6 friendly fraud, 7 chargeback.
    public var voidedReason: Int64?
    public var voidedQuantity: Int64?

    public init(
        kind: String? = "androidpublisher#voidedPurchase", purchaseToken: String?, orderId: String?,
        purchaseTimeMillis: Int64? = nil, voidedTimeMillis: Int64? = nil, voidedSource: Int64? = nil,
        voidedReason: Int64? = nil, voidedQuantity: Int64? = nil
    ) {
        self.kind = kind
        self.purchaseToken = purchaseToken
        self.orderId = orderId
        self.purchaseTimeMillis = purchaseTimeMillis
        self.voidedTimeMillis = voidedTimeMillis
        self.voidedSource = voidedSource
        self.voidedReason = voidedReason
        self.voidedQuantity = voidedQuantity
    }

    enum CodingKeys: String, CodingKey {
        case kind, purchaseToken, orderId, purchaseTimeMillis, voidedTimeMillis, voidedSource, voidedReason, voidedQuantity
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        kind = try? container.decodeIfPresent(String.self, forKey: .kind)
        purchaseToken = try? container.decodeIfPresent(String.self, forKey: .purchaseToken)
        orderId = try? container.decodeIfPresent(String.self, forKey: .orderId)
        purchaseTimeMillis = GoogleInt64.decode(container, .purchaseTimeMillis)
        voidedTimeMillis = GoogleInt64.decode(container, .voidedTimeMillis)
        voidedSource = GoogleInt64.decode(container, .voidedSource)
        voidedReason = GoogleInt64.decode(container, .voidedReason)
        voidedQuantity = GoogleInt64.decode(container, .voidedQuantity)
    }

    /// When the purchase was voided; nil when missing or outside 1970–2200 (`StrictDate`).
    public var voidedTime: Date? { voidedTimeMillis.flatMap { SourceNumber.date(unixMilliseconds: $0) } }

    /// The refunded purchase this void states (CONTRACT "Finance figures"), keyed as the Google lookup keys it: store `play_store`,
    /// transaction id = `orderId` (the lookup's `storeTransactionID` is the line item's `latestSuccessfulOrderId`,
    /// renewal suffix `..N` included, which is the id Google voids), refunded at `voidedTimeMillis`. Google's list
    /// states no price (the amount is unknown, never guessed) and no environment (`isSandbox` unknown). nil when the
    /// void has no order id (no key a lookup would share) or no readable voided time.
    public var refundedPurchase: PurchaseFact? {
        guard let voidedTime, let orderId, !orderId.isEmpty else { return nil }
        return PurchaseFact(
            origin: .googlePlay, productID: "", store: .playStore, kind: .unstated, isSandbox: nil, refundedAt: voidedTime,
            storeTransactionID: orderId, line: PurchaseLine.of(store: .playStore, ids: [purchaseToken, orderId]),
            // A void names its purchase, not its buyer.
            buyer: .unstated)
    }

    /// The key entries are deduplicated by: the order id, else the purchase token; nil when the entry has neither.
    public var dedupeKey: String? {
        if let orderId, !orderId.isEmpty { return "order:" + orderId }
        if let purchaseToken, !purchaseToken.isEmpty { return "token:" + purchaseToken }
        return nil
    }
}

/// Google's int64 fields: JSON strings of digits (as the API sends them) or bare numbers, saturated into `Int64`;
/// anything else (fractions in text, words, objects) is nil.
enum GoogleInt64 {
    static func decode<Key: CodingKey>(_ container: KeyedDecodingContainer<Key>, _ key: Key) -> Int64? {
        if let text = try? container.decodeIfPresent(String.self, forKey: key) { return parse(text) }
        if let number = try? container.decodeIfPresent(Double.self, forKey: key) { return SourceNumber.saturatingInt64(number) }
        return nil
    }

    /// Digits with an optional sign, saturated when too long for `Int64`.
    static func parse(_ text: String) -> Int64? {
        var digits = Substring(text)
        var negative = false
        if let first = digits.first, first == "-" || first == "+" {
            negative = first == "-"
            digits = digits.dropFirst()
        }
        guard !digits.isEmpty, digits.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else { return nil }
        if let value = Int64(digits) { return negative ? -value : value }
        return negative ? .min : .max
    }
}

extension GoogleJSON {
    /// One page of `purchases.voidedpurchases.list` (throws when the body is not such a page).
    public static func voidedPurchases(_ body: Data) throws -> VoidedPurchasesListResponse {
        try JSONDecoder().decode(VoidedPurchasesListResponse.self, from: SourceText.sanitizedJSON(body))
    }
}
