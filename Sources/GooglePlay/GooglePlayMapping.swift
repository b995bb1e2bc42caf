import Foundation
import SubreconCore

/// Why a decoded Google Play answer cannot be believed (fail closed: the user is left untouched).
public struct GooglePlayMappingError: Error, Sendable, Hashable, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// `SubscriptionPurchaseV2` → `StoreFact`s (SPEC 5.2, 5.3, 5.7). Pure, table-tested; Foundation + SubreconCore only.
///
/// One fact per line item: origin `.googlePlay`, store `.playStore`, kind `.subscription` (auto-renewing plan) or
/// `.nonRenewing` (prepaid plan), `expiresDate` = `expiryTime`, `purchaseDate` = `startTime`, `storeTransactionID`
/// = the item's `latestSuccessfulOrderId` (aliases: the order id without its `..N` renewal suffix), `lookupID` =
/// the purchase token, `isSandbox` = `testPurchase` present, `renewalPrice` = `autoRenewingPlan.recurringPrice` (the next renewal's price; what was paid is not stated).
///
/// `subscriptionState`:
/// | Google | StoreState | note |
/// | --- | --- | --- |
/// | `ACTIVE` | `.active` | auto-renew from `autoRenewEnabled` (prepaid: false) |
/// | `CANCELED` | nil | auto-renew false; the dates decide (`canceled` until `expiryTime`, then `expired`) |
/// | `IN_GRACE_PERIOD` | `.gracePeriod` | `billing_issue` |
/// | `ON_HOLD` | `.expired` | account hold: not entitled |
/// | `PAUSED` | `.paused` | |
/// | `EXPIRED` | `.expired` | |
/// | `PENDING`, `PENDING_PURCHASE_CANCELED` | `.pending` | never paid: not entitled |
/// | `UNSPECIFIED`, missing, anything else | error | fail closed |
public enum GooglePlayMapping {
    /// The `StoreState` for a Google `subscriptionState`; throws for unspecified, missing or unknown values.
    public static func state(_ raw: String?) throws(GooglePlayMappingError) -> (state: StoreState?, canceled: Bool) {
        switch raw {
        case "SUBSCRIPTION_STATE_ACTIVE": return (.active, false)
        case "SUBSCRIPTION_STATE_CANCELED": return (nil, true)
        case "SUBSCRIPTION_STATE_IN_GRACE_PERIOD": return (.gracePeriod, false)
        case "SUBSCRIPTION_STATE_ON_HOLD": return (.expired, false)
        case "SUBSCRIPTION_STATE_PAUSED": return (.paused, false)
        case "SUBSCRIPTION_STATE_EXPIRED": return (.expired, false)
        case "SUBSCRIPTION_STATE_PENDING", "SUBSCRIPTION_STATE_PENDING_PURCHASE_CANCELED": return (.pending, false)
        case nil: throw GooglePlayMappingError("subscription state not stated")
        case let other?:
            throw GooglePlayMappingError("subscription state \(String(other.prefix(80))) is not one subrecon can judge")
        }
    }

    /// The store facts of one answer about purchase token `token`.
    public static func storeFacts(_ purchase: SubscriptionPurchaseV2, token: String) throws(GooglePlayMappingError) -> [StoreFact] {
        let (state, canceled) = try state(purchase.subscriptionState)
        guard let items = purchase.lineItems, !items.isEmpty else {
            throw GooglePlayMappingError("the subscription names no line items")
        }
        let sandbox = purchase.isTestPurchase
        let start = date(purchase.startTime)
        var facts: [StoreFact] = []
        for item in items {
            guard let product = item.productId, !product.isEmpty else {
                throw GooglePlayMappingError("a line item names no product id")
            }
            let prepaid = item.prepaidPlan != nil && item.autoRenewingPlan == nil
            var autoRenew: Bool? = prepaid ? false : item.autoRenewingPlan?.autoRenewEnabled
            if canceled { autoRenew = false }
            let order = item.latestSuccessfulOrderId.flatMap { $0.isEmpty ? nil : $0 }
            let fact = PurchaseFact(
                origin: .googlePlay, productID: product, store: .playStore, kind: prepaid ? .nonRenewing : .subscription,
                isSandbox: sandbox, purchaseDate: start, expiresDate: date(item.expiryTime), autoRenew: autoRenew,
                isPaused: state == .paused, storeState: state, originalTransactionID: nil, storeTransactionID: order,
                renewalPrice: price(item.autoRenewingPlan?.recurringPrice))
            facts.append(StoreFact(lookupID: token, purchase: fact, aliases: order.map { [orderBase($0)] } ?? []))
        }
        return facts
    }

    /// A 410 (Gone: "no longer available for query because it has been expired for too long") is evidence the
    /// purchase is over (SPEC 5.2): an expired subscription of `productID` (the row's product), no dates.
    public static func expiredEvidence(token: String, productID: String) -> StoreFact {
        StoreFact(
            lookupID: token,
            purchase: PurchaseFact(
                origin: .googlePlay, productID: productID, store: .playStore, kind: .subscription, isSandbox: nil,
                autoRenew: false, storeState: .expired))
    }

    /// An order id without its renewal suffix: `GPA.1234-5678-9012-34567..3` → `GPA.1234-5678-9012-34567`.
    public static func orderBase(_ orderID: String) -> String {
        guard let range = orderID.range(of: "..", options: .backwards) else { return orderID }
        let suffix = orderID[range.upperBound...]
        guard !suffix.isEmpty, suffix.allSatisfy({ $0.isASCII && $0.isNumber }) else { return orderID }
        return String(orderID[..<range.lowerBound])
    }

    /// `units` + `nanos` / 1e9 as an exact decimal in `currencyCode`; nil (unknown, never guessed) when a part is
    /// missing or malformed: no currency, units not an integer, nanos outside ±999,999,999 or of the other sign.
    public static func price(_ money: GoogleMoney?) -> Money? {
        guard let money, let currency = money.currencyCode, currency.count == 3,
            currency.allSatisfy({ $0.isASCII && $0.isLetter }), let unitsText = money.units
        else { return nil }
        guard let units = Int64(unitsText) else { return nil }
        let nanos = money.nanos ?? 0
        guard abs(nanos) <= 999_999_999 else { return nil }
        if (units > 0 && nanos < 0) || (units < 0 && nanos > 0) { return nil }
        guard let whole = Decimal(string: String(units)) else { return nil }
        let amount = whole + Decimal(nanos) / Decimal(1_000_000_000)
        return Money(amount: amount, currency: currency)
    }

    /// An RFC 3339 instant (`Z` or an offset, with or without fractional seconds of any length); nil when
    /// unreadable or outside 1970...9999.
    public static func date(_ text: String?) -> Date? {
        guard let text, text.utf8.count <= 64 else { return nil }
        var whole = text
        var fraction = 0.0
        if let dot = text.firstIndex(of: ".") {
            let digitsEnd = text[text.index(after: dot)...].firstIndex { !($0.isASCII && $0.isNumber) } ?? text.endIndex
            let digits = text[text.index(after: dot)..<digitsEnd]
            guard !digits.isEmpty else { return nil }
            fraction = Double("0." + digits.prefix(9)) ?? 0
            whole = String(text[..<dot]) + String(text[digitsEnd...])
        }
        guard let base = ISO8601.date(whole) else { return nil }
        let date = base.addingTimeInterval(fraction)
        return SourceNumber.isPlausible(date) ? date : nil
    }
}
