import Foundation
import SubreconCore

/// `ProductPurchase` (a one-time product) → a non-expiring `StoreFact` (CONTRACT "Sources and the decision": a Google Play one-time product).
/// Pure, table-tested; Foundation + SubreconCore only.
///
/// | field | fact |
/// | --- | --- |
/// | `purchaseState` 0 purchased | `kind: .nonExpiring`: entitles without an end |
/// | `purchaseState` 1 canceled | `storeState: .revoked` (refunded or voided: never entitles, status `refunded`) |
/// | `purchaseState` 2 pending | `storeState: .pending` (never paid: never entitles) |
/// | `purchaseState` missing or another value | error |
/// | `consumptionState` 1 consumed | `kind: .unstated`: a consumable, never lifetime |
/// | `purchaseType` absent / 0 test / 1 promo / 2 rewarded | `isSandbox` false / true / false / false; another value: error |
/// | `purchaseTimeMillis` | `purchaseDate`; outside 1970...2200: error |
/// | `orderId` | `storeTransactionID`, line (with the token) |
/// | `obfuscatedExternalAccountId` | `buyer` (unstated when absent or blank) |
/// | `productId` stated and not the one asked about | error |
/// | `acknowledgementState`, `consumptionState` other than 0/1, `quantity` below 1 | error |
///
/// Google states no price for a one-time product purchase: `price` stays unknown.
public enum GooglePlayProductMapping {
    public static func storeFact(
        _ purchase: ProductPurchase, productID: String, token: String
    ) throws(GooglePlayMappingError) -> StoreFact {
        if let stated = purchase.productId, stated != productID {
            throw GooglePlayMappingError("the product purchase names another product than the one asked about")
        }
        let state: StoreState?
        switch purchase.purchaseState {
        case 0?: state = nil
        case 1?: state = .revoked
        case 2?: state = .pending
        case nil: throw GooglePlayMappingError("the product purchase does not state its purchaseState")
        case let other?: throw GooglePlayMappingError("purchaseState \(other) is not one Google documents (0, 1, 2)")
        }
        let sandbox: Bool
        switch purchase.purchaseType {
        case nil: sandbox = false
        case 0?: sandbox = true
        case 1?, 2?: sandbox = false
        case let other?: throw GooglePlayMappingError("purchaseType \(other) is not one Google documents (0, 1, 2)")
        }
        for (name, value) in [("consumptionState", purchase.consumptionState), ("acknowledgementState", purchase.acknowledgementState)] {
            if let value, value != 0 && value != 1 { throw GooglePlayMappingError("\(name) \(value) is not 0 or 1") }
        }
        if let quantity = purchase.quantity, quantity < 1 { throw GooglePlayMappingError("quantity \(quantity) is below 1") }
        var purchased: Date?
        if let millis = purchase.purchaseTimeMillis {
            guard let date = StrictDate.epochMilliseconds(millis) else {
                throw GooglePlayMappingError("purchaseTimeMillis is not a time in 1970...2200")
            }
            purchased = date
        }
        let order = purchase.orderId.flatMap { $0.isEmpty ? nil : $0 }
        let fact = PurchaseFact(
            origin: .googlePlay, productID: productID, store: .playStore,
            kind: purchase.consumptionState == 1 ? .unstated : .nonExpiring, isSandbox: sandbox, purchaseDate: purchased,
            autoRenew: false, storeState: state, storeTransactionID: order,
            line: PurchaseLine.of(store: .playStore, ids: [token, order]),
            buyer: .stated(purchase.obfuscatedExternalAccountId, store: .playStore))
        return StoreFact(lookupID: token, purchase: fact, aliases: order.map { [GooglePlayMapping.orderBase($0)] } ?? [])
    }
}
