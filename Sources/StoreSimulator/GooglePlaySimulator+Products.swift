import Foundation

/// One Play one-time product purchase as tests set it; encoded in `ProductPurchase`'s real JSON shape
/// (`purchaseTimeMillis` an int64 string, the states int32 numbers, `purchaseType` absent for a real purchase).
public struct SimulatedPlayProduct: Sendable, Hashable {
    public var productID: String
    /// 0 purchased, 1 canceled, 2 pending.
    public var purchaseState: Int
    public var purchaseTime: Date
    public var orderID: String?
    /// nil: a real purchase; 0 test, 1 promo, 2 rewarded.
    public var purchaseType: Int?
    public var consumptionState = 0
    public var acknowledgementState = 1
    public var quantity = 1
    public var regionCode = "US"
    /// `obfuscatedExternalAccountId`, top level: the buyer's account the app handed Google; nil: left out.
    public var obfuscatedAccountID: String?

    public init(productID: String, purchaseState: Int = 0, purchaseTime: Date, orderID: String? = nil, purchaseType: Int? = nil) {
        self.productID = productID
        self.purchaseState = purchaseState
        self.purchaseTime = purchaseTime
        self.orderID = orderID
        self.purchaseType = purchaseType
    }

    func jsonBody() -> Data {
        var object: [String: Any] = [
            "kind": "androidpublisher#productPurchase", "productId": productID, "purchaseState": purchaseState,
            "purchaseTimeMillis": String(Int64((purchaseTime.timeIntervalSince1970 * 1000).rounded(.down))),
            "consumptionState": consumptionState, "acknowledgementState": acknowledgementState, "quantity": quantity,
            "regionCode": regionCode,
        ]
        if let orderID { object["orderId"] = orderID }
        if let obfuscatedAccountID { object["obfuscatedExternalAccountId"] = obfuscatedAccountID }
        if let purchaseType { object["purchaseType"] = purchaseType }
        return (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
    }
}

extension GooglePlaySimulator {
    /// The key of a product purchase, and of its scripted faults (`setFault(_:token:)` with this as the token).
    public static func productKey(product: String, token: String) -> String { "product:" + product + "/" + token }

    /// `purchases.products.get` answers `purchase` for (its product, `token`).
    public func setProduct(_ purchase: SimulatedPlayProduct, token: String) {
        products[Self.productKey(product: purchase.productID, token: token)] = purchase
    }

    /// `GET …/applications/{package}/purchases/products/{productId}/tokens/{token}` after the bearer check: scripted
    /// faults, then 404 for another package (`applicationNotFound`) or an unknown (product, token), 410 for a token
    /// set gone, else the purchase.
    func productRoute(package: String, product: String, token: String) -> SimulatorResponse {
        let key = Self.productKey(product: product, token: token)
        let normal = { () -> SimulatorResponse in
            guard package == self.packageName else {
                return Self.error(
                    404, "No application was found for the given package name.", status: "NOT_FOUND", reason: "applicationNotFound")
            }
            if self.isGone(token) {
                return Self.error(
                    410, "The purchase is no longer available for query.", status: "GONE", reason: "purchaseNoLongerAvailable")
            }
            guard let purchase = self.products[key] else {
                return Self.error(404, "The purchase token was not found.", status: "NOT_FOUND", reason: "purchaseTokenNotFound")
            }
            return .json(200, purchase.jsonBody())
        }
        return scriptedFault(key: key, malformed: "{\"kind\": \"androidpublisher#productPurch", normal) ?? normal()
    }
}
