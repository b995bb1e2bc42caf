import Foundation
import SubreconCore

// From a Stripe subscription to the core's facts (CONTRACT "Sources and the decision", "Finance figures"). Pure; imports Foundation and SubreconCore
// only (`scripts/fuzz` compiles it into the fuzz target).

/// How one Stripe subscription becomes `StoreFact`s: one per item.
///
/// | Stripe `status`                               | `StoreState`    | entitles                                   |
/// |-----------------------------------------------|-----------------|--------------------------------------------|
/// | `active`, `trialing`                          | `.active`       | until the period end (`canceled` when it will not renew) |
/// | `past_due`                                    | `.gracePeriod`  | `billing_issue`                            |
/// | `paused`                                      | `.paused`       | never (`paused`)                           |
/// | `canceled`, `unpaid`, `incomplete_expired`    | `.expired`      | never                                      |
/// | `incomplete`                                  | `.pending`      | never                                      |
/// | anything else, or missing                     | error (fetch) for the user                                   |
///
/// - `productID` is the item's price's product (`prod_…`), `alternateProductIDs` the price id (`price_…`); without a
///   product the price id is the product id.
/// - The period: the item's `current_period_start`/`_end` (API versions from `2025-03-31.basil`), else the
///   subscription's (older versions), else unknown. A `cancel_at` before the period end ends the subscription then
///   (and it will not renew); a subscription Stripe has ended (`ended_at`) is dated by it.
/// - `autoRenew` is `!cancel_at_period_end` (nil when not stated), false when `cancel_at` falls in the period.
/// - `livemode: false` is a sandbox purchase, `true` a live one, missing unknown.
/// - Ended (`canceled`, …) with `cancellation_details.reason` = `payment_disputed`: refunded at `ended_at` (else
///   `canceled_at`), CONTRACT "Sources and the decision".
/// - The renewal price (CONTRACT "Finance figures"; what was paid is not stated here) is `unit_amount` × `quantity` in the currency's minor units (`StripeCurrency.exponent`); unknown when
///   either is missing or the currency is not a known ISO code.
/// - `buyer` (CONTRACT "Whose purchase it is") is the subscription's `metadata.user_id`, else its expanded customer's
///   (`StripeSubscription.statedBuyer`); a customer asked for expanded that came as a bare id leaves the buyer
///   unknown: error (fetch) for the user, never "nobody".
/// - `originalTransactionID` and `storeTransactionID` are the subscription id (`sub_…`); the item ids (`si_…`) are
///   aliases; the line (CONTRACT "Whose purchase it is") is the subscription id and the item id. The subscription id is a line key, never
///   written into a `users` column.
public enum StripeMapping {
    public static func storeState(status: String?) -> StoreState? {
        switch status {
        case "active", "trialing": .active
        case "past_due": .gracePeriod
        case "paused": .paused
        case "canceled", "unpaid", "incomplete_expired": .expired
        case "incomplete": .pending
        default: nil
        }
    }

    /// The facts of one subscription, or the error that fails the user closed.
    public static func storeFacts(_ subscription: StripeSubscription) -> Result<[StoreFact], SourceError> {
        func failure(_ message: String) -> Result<[StoreFact], SourceError> {
            .failure(SourceError(origin: .stripe, kind: .fetch, message: message))
        }
        guard let id = subscription.id, !id.isEmpty else { return failure("Stripe subscription without an id") }
        let name = String(id.prefix(80))
        guard let state = storeState(status: subscription.status) else {
            let status = subscription.status.map { "'\(String($0.prefix(40)))'" } ?? "missing"
            return failure("Stripe subscription \(name) has an unknown status (\(status))")
        }
        guard let items = subscription.items, !items.isEmpty else {
            return failure("Stripe subscription \(name) lists no items")
        }
        if let field = (subscription.unusableDates + items.flatMap(\.unusableDates)).first {
            return failure("Stripe subscription \(name) states a \(field) that is not a Unix time in 1970...2200")
        }
        // Judged on some of its items, a subscription could lose (or gain) a tier it does not (CONTRACT "Hostile answers and bounded work").
        guard subscription.itemsHaveMore != true else {
            return failure("Stripe subscription \(name) lists only part of its items (items.has_more)")
        }
        let buyer: Buyer
        do { buyer = try subscription.statedBuyer.buyer(of: "subscription \(name)").get() } catch { return .failure(error) }
        var facts: [StoreFact] = []
        for item in items {
            let priceID = item.price?.id.flatMap { $0.isEmpty ? nil : $0 }
            let productID = item.price?.product.flatMap { $0.isEmpty ? nil : $0 }
            guard let product = productID ?? priceID else {
                return failure("Stripe subscription \(name) has an item without a price or product id")
            }
            let periodEnd = item.currentPeriodEnd ?? subscription.currentPeriodEnd
            let periodStart = item.currentPeriodEnd != nil ? item.currentPeriodStart : subscription.currentPeriodStart
            var expires = periodEnd
            var autoRenew = subscription.cancelAtPeriodEnd.map { !$0 }
            if let cancelAt = subscription.cancelAt {
                if let end = periodEnd {
                    if cancelAt <= end {
                        autoRenew = false
                        expires = cancelAt
                    }
                } else {
                    autoRenew = false
                }
            }
            if state == .expired, let ended = subscription.endedAt {
                expires = expires.map { min($0, ended) } ?? ended
            }
            var purchase = PurchaseFact(
                origin: .stripe, productID: product, store: .stripe, kind: .subscription,
                isSandbox: subscription.livemode.map { !$0 }, purchaseDate: periodStart, expiresDate: expires,
                refundedAt: disputedAt(subscription, state), autoRenew: autoRenew, isPaused: state == .paused, storeState: state,
                originalTransactionID: id,
                storeTransactionID: id, renewalPrice: price(of: item, subscriptionCurrency: subscription.currency),
                line: PurchaseLine.of(store: .stripe, ids: [id, item.id]), buyer: buyer)
            if productID != nil, let priceID { purchase.alternateProductIDs = [priceID] }
            if subscription.status == "trialing" { purchase.periodType = .trial }
            let aliases = item.id.flatMap { $0.isEmpty ? nil : [$0] } ?? []
            facts.append(StoreFact(lookupID: id, purchase: purchase, aliases: aliases))
        }
        return .success(facts)
    }

    /// Canceled because the payment was disputed: the line ends refunded at `ended_at` (else `canceled_at`), never
    /// expired (CONTRACT "Sources and the decision"); nil otherwise.
    static func disputedAt(_ subscription: StripeSubscription, _ state: StoreState) -> Date? {
        guard state == .expired, subscription.cancellationReason == "payment_disputed" else { return nil }
        return subscription.endedAt ?? subscription.canceledAt
    }

    /// The facts of every subscription of a customer; the first error fails them all (the user is left untouched).
    public static func storeFacts(_ subscriptions: [StripeSubscription]) -> Result<[StoreFact], SourceError> {
        var facts: [StoreFact] = []
        for subscription in subscriptions {
            switch storeFacts(subscription) {
            case .success(let more): facts += more
            case .failure(let error): return .failure(error)
            }
        }
        return .success(facts)
    }

    /// Largest `unit_amount` and `quantity` believed: their product stays well inside `Decimal`'s 38 exact digits.
    public static let maxUnitAmount: Int64 = 1_000_000_000_000_000
    public static let maxQuantity: Int64 = 1_000_000_000

    /// `unit_amount` × `quantity` in major units of the currency; nil when anything is unknown or out of range.
    public static func price(of item: StripeSubscriptionItem, subscriptionCurrency: String?) -> Money? {
        guard let unit = item.price?.unitAmount, let quantity = item.quantity, (0...maxUnitAmount).contains(unit),
            (0...maxQuantity).contains(quantity),
            let currency = item.price?.currency ?? subscriptionCurrency,
            let exponent = StripeCurrency.exponent(currency)
        else { return nil }
        return StripeCurrency.money(minorUnits: Decimal(unit) * Decimal(quantity), currency: currency, exponent: exponent)
    }
}

/// Stripe's minor units per currency (https://docs.stripe.com/currencies).
public enum StripeCurrency {
    /// Zero-decimal currencies: amounts are whole units (`JPY` 500 is ¥500).
    public static let zeroDecimal: Set<String> = [
        "BIF", "CLP", "DJF", "GNF", "JPY", "KMF", "KRW", "MGA", "PYG", "RWF", "UGX", "VND", "VUV", "XAF", "XOF", "XPF",
    ]
    /// Three-decimal currencies: amounts are thousandths (`KWD` 5000 is 5.000 KWD).
    public static let threeDecimal: Set<String> = ["BHD", "JOD", "KWD", "OMR", "TND"]

    /// The exponent of a currency (0, 2 or 3); nil when `code` is not three ASCII letters.
    public static func exponent(_ code: String) -> Int? {
        let upper = code.uppercased()
        guard upper.utf8.count == 3, upper.utf8.allSatisfy({ (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) }) else {
            return nil
        }
        if zeroDecimal.contains(upper) { return 0 }
        if threeDecimal.contains(upper) { return 3 }
        return 2
    }

    /// An exact amount: `minorUnits` / 10^exponent.
    public static func money(minorUnits: Decimal, currency: String, exponent: Int) -> Money {
        var divisor = Decimal(1)
        for _ in 0..<max(0, exponent) { divisor *= 10 }
        return Money(amount: minorUnits / divisor, currency: currency)
    }
}
