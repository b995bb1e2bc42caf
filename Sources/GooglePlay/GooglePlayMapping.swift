import Foundation
import SubreconCore

/// Why a decoded Google Play answer cannot be believed (fail closed: the user is left untouched).
public struct GooglePlayMappingError: Error, Sendable, Hashable, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// `SubscriptionPurchaseV2` → `StoreFact`s (CONTRACT "Sources and the decision", "Finance figures"). Pure, table-tested; Foundation + SubreconCore only.
///
/// One fact per line item: origin `.googlePlay`, store `.playStore`, kind `.subscription` (auto-renewing plan) or
/// `.nonRenewing` (prepaid plan), `expiresDate` = `expiryTime`, `purchaseDate` = `startTime`, `storeTransactionID`
/// = the item's `latestSuccessfulOrderId` (aliases: the order id without its `..N` renewal suffix), `lookupID` =
/// the purchase token, `line` = the token, the token it links to (`linkedPurchaseToken`, CONTRACT "Whose purchase it is": one line) and
/// the order ids, `isSandbox` = `testPurchase` present, `renewalPrice` = `autoRenewingPlan.recurringPrice` (the next renewal's price; what was paid is not stated).
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
        let start = try statedDate(purchase.startTime, "startTime")
        if let linked = purchase.linkedPurchaseToken, linked.isEmpty {
            throw GooglePlayMappingError("linkedPurchaseToken is stated but empty")
        }
        var facts: [StoreFact] = []
        for item in items {
            guard let product = item.productId, !product.isEmpty else {
                throw GooglePlayMappingError("a line item names no product id")
            }
            let prepaid = item.prepaidPlan != nil && item.autoRenewingPlan == nil
            var autoRenew: Bool? = prepaid ? false : item.autoRenewingPlan?.autoRenewEnabled
            if canceled { autoRenew = false }
            let order = item.latestSuccessfulOrderId.flatMap { $0.isEmpty ? nil : $0 }
            let expires = try statedDate(item.expiryTime, "a line item's expiryTime")
            let fact = PurchaseFact(
                origin: .googlePlay, productID: product, store: .playStore, kind: prepaid ? .nonRenewing : .subscription,
                isSandbox: sandbox, purchaseDate: start, expiresDate: expires, autoRenew: autoRenew,
                isPaused: state == .paused, storeState: state, originalTransactionID: nil, storeTransactionID: order,
                renewalPrice: price(item.autoRenewingPlan?.recurringPrice),
                line: PurchaseLine.of(store: .playStore, ids: [token, purchase.linkedPurchaseToken, order, purchase.latestOrderId]),
                buyer: .stated(purchase.externalAccountIdentifiers?.obfuscatedExternalAccountId, store: .playStore))
            facts.append(StoreFact(lookupID: token, purchase: fact, aliases: order.map { [orderBase($0)] } ?? []))
        }
        return facts
    }

    /// A 410 (Gone: "no longer available for query because it has been expired for too long") is evidence the
    /// purchase is over (CONTRACT "Sources and the decision"): an expired subscription of `productID` (the row's product), no dates, about the
    /// line of `token` alone (CONTRACT "Whose purchase it is").
    public static func expiredEvidence(token: String, productID: String) -> StoreFact {
        StoreFact(
            lookupID: token,
            purchase: PurchaseFact(
                origin: .googlePlay, productID: productID, store: .playStore, kind: .subscription, isSandbox: nil,
                autoRenew: false, storeState: .expired, line: PurchaseLine.of(store: .playStore, ids: [token]), buyer: .unstated))
    }

    /// An order id without its renewal suffix: `GPA.1234-5678-9012-34567..3` → `GPA.1234-5678-9012-34567`.
    public static func orderBase(_ orderID: String) -> String { StoreKind.playStore.lineKeys(of: orderID)[0] }

    /// `units` + `nanos` / 1e9 as an exact decimal in `currencyCode`; nil (unknown, never guessed) when a part is
    /// missing or malformed: no currency, units not an integer, nanos unreadable or outside 0...999,999,999, or
    /// a negative amount (CONTRACT "Hostile answers and bounded work": never revenue).
    public static func price(_ money: GoogleMoney?) -> Money? {
        guard let money, let currency = money.currencyCode, currency.count == 3,
            currency.allSatisfy({ $0.isASCII && $0.isLetter }), let unitsText = money.units, !money.nanosUnreadable
        else { return nil }
        guard let units = Int64(unitsText), units >= 0 else { return nil }
        let nanos = money.nanos ?? 0
        guard (0...999_999_999).contains(nanos) else { return nil }
        guard let whole = Decimal(string: String(units)) else { return nil }
        let amount = whole + Decimal(nanos) / Decimal(1_000_000_000)
        return Money(amount: amount, currency: currency)
    }

    /// An RFC 3339 instant (`Z` or an offset, with or without fractional seconds) in 1970...2200
    /// (`StrictDate.parse`); nil when absent or unusable.
    public static func date(_ text: String?) -> Date? { text.flatMap(StrictDate.parse) }

    /// The instant `text` states; nil when absent; an error naming `field` when present but unusable (CONTRACT "Hostile answers and bounded work":
    /// the user's evidence is then unusable, never read as absent).
    static func statedDate(_ text: String?, _ field: String) throws(GooglePlayMappingError) -> Date? {
        guard let text else { return nil }
        guard let date = StrictDate.parse(text) else {
            throw GooglePlayMappingError("\(field) is not an RFC 3339 time in 1970...2200")
        }
        return date
    }
}

/// A purchase Google's voided-purchases list names: refunded, charged back or revoked at `voidedAt`. A void the feed
/// read reaches a lookup as the row's refund (the feed's `refundedPurchase`, by its order id, with its token).
public struct GoogleVoid: Sendable, Hashable {
    public var token: String?
    /// The voided order, its renewal suffix included.
    public var orderID: String
    public var voidedAt: Date

    public init(token: String?, orderID: String, voidedAt: Date) {
        self.token = token
        self.orderID = orderID
        self.voidedAt = voidedAt
    }
}

extension GooglePlayMapping {
    /// The facts of one answer with the voids Google listed for their lines (CONTRACT "Sources and the decision": a refund is a fact about its
    /// line; Google's own answer then says only `EXPIRED`). A void of the line item's current order
    /// (`latestSuccessfulOrderId`) refunds it; a void of another order or of a token of the line refunds it only
    /// when Google no longer entitles it (`EXPIRED`, `ON_HOLD`): an earlier period's void never ends a live period.
    /// The refund is keyed by the voided order, as the feed keys it.
    public static func applyingVoids(_ facts: [StoreFact], voids: [GoogleVoid]) -> [StoreFact] {
        guard !voids.isEmpty else { return facts }
        return facts.map { fact in
            let keys = fact.line?.keys ?? []
            let current = fact.purchase.storeTransactionID
            let over = fact.purchase.storeState == .expired
            let matching = voids.filter { void in
                if void.orderID == current { return true }
                guard over else { return false }
                return void.token.map(keys.contains) == true || keys.contains(orderBase(void.orderID))
            }
            guard let void = matching.max(by: { $0.voidedAt < $1.voidedAt }) else { return fact }
            var voided = fact
            voided.purchase.refundedAt = void.voidedAt
            voided.purchase.refundTransactionID = void.orderID
            // Google no longer entitles the line and a void names it: revoked (a 410 states no period to date it in).
            if over { voided.purchase.storeState = .revoked }
            return voided
        }
    }
}
