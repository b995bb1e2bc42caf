import Foundation

/// Who paid for a purchase, as the source states it (RevenueCat `ownership_type`, Apple `inAppOwnershipType`).
public enum Ownership: String, Sendable, Codable, Hashable, CaseIterable {
    /// Bought by the account that holds it.
    case purchased
    /// Shared through Family Sharing: grants the tier, but nobody in the household paid for it (CONTRACT "Finance figures").
    case familyShared = "family_shared"
}

/// The kind of period a purchase is in, as the source states it (RevenueCat `period_type`, Apple `offerType` /
/// `offerDiscountType`).
public enum PeriodType: String, Sendable, Codable, Hashable, CaseIterable {
    /// A period at the regular price.
    case normal
    /// A free trial: never revenue.
    case trial
    /// An introductory or offer price: what was paid, but not the next renewal's price.
    case intro
}

/// Which price a finance figure carries (CONTRACT "Finance figures" `price_basis`).
public enum PriceBasis: String, Sendable, Codable, Hashable, CaseIterable {
    /// What was paid for the period (refunded value).
    case paid
    /// The next renewal's price, as the source states it (revenue at risk, restored value).
    case renewal
    /// A family-shared purchase: value 0.
    case familyShared = "family_shared"
    /// A free trial: value 0.
    case trial
    /// No source stated the price: counted, never guessed.
    case unknown
}

/// The finance figure a verdict belongs to (CONTRACT "Finance figures"). A user is in at most one refund figure, and may be both in
/// billing issue and restored (both priced at the next renewal).
public enum FinanceCategory: String, Sendable, Codable, Hashable, CaseIterable {
    /// A tier revoked by a refund or revocation.
    case refund
    /// A user entitled in billing issue (revenue at risk).
    case billingIssueAtRisk = "billing_issue_at_risk"
    /// A tier granted back.
    case restored

    /// Whether the figure is priced at the next renewal (else at what was paid).
    public var usesRenewalPrice: Bool { self != .refund }

    /// The categories of a reported user, from the row as read, the truth and the action (CONTRACT "Finance figures"); empty for a
    /// user in none (and for a skipped user, who has no truth).
    public static func of(dbTier: Int, truthTier: Int?, truthStatus: String?, action: String) -> [FinanceCategory] {
        guard let truthTier, let truthStatus else { return [] }
        var categories: [FinanceCategory] = []
        if dbTier > 0 && truthTier == 0 && truthStatus == SubscriptionStatus.refunded.rawValue { categories.append(.refund) }
        if truthTier > 0 && truthStatus == SubscriptionStatus.billingIssue.rawValue { categories.append(.billingIssueAtRisk) }
        if action == Action.restore.rawValue { categories.append(.restored) }
        return categories
    }
}

/// The price one finance figure carries for one user: an exact amount (nil when unknown), its currency (nil when
/// no source stated one) and which price it is.
public struct FinancePrice: Sendable, Codable, Hashable {
    public var amount: Decimal?
    public var currency: String?
    public var basis: PriceBasis

    public init(amount: Decimal?, currency: String?, basis: PriceBasis) {
        self.amount = amount
        self.currency = currency?.uppercased()
        self.basis = basis
    }

    public static let unknown = FinancePrice(amount: nil, currency: nil, basis: .unknown)

    /// The price of `purchase` for a figure (CONTRACT "Finance figures"):
    /// - family shared: 0 (`family_shared`), in the currency the source stated, if any;
    /// - refund: the purchase's own paid price (`paid`), 0 for a free trial (`trial`);
    /// - billing issue and restored: the next renewal's price as stated (`renewal`); without one, 0 for a free trial
    ///   (`trial`);
    /// - otherwise `unknown`: never borrowed from another price.
    public static func of(_ purchase: PurchaseFact?, for category: FinanceCategory) -> FinancePrice {
        guard let purchase else { return .unknown }
        let statedCurrency = purchase.price?.currency ?? purchase.renewalPrice?.currency
        if purchase.ownership == .familyShared {
            return FinancePrice(amount: 0, currency: statedCurrency, basis: .familyShared)
        }
        if category.usesRenewalPrice {
            if let renewal = purchase.renewalPrice {
                return FinancePrice(amount: renewal.amount, currency: renewal.currency, basis: .renewal)
            }
        } else if purchase.periodType != .trial, let paid = purchase.price {
            return FinancePrice(amount: paid.amount, currency: paid.currency, basis: .paid)
        }
        if purchase.periodType == .trial {
            return FinancePrice(amount: 0, currency: statedCurrency, basis: .trial)
        }
        return .unknown
    }
}

extension Money {
    /// An exact amount from an integer count of `1 / 10^exponent` units (Apple milliunits: exponent 3; Stripe minor
    /// units: the currency's exponent), never through binary floating point.
    public init(units: Int64, exponent: Int, currency: String) {
        var amount = Decimal(units)
        if exponent > 0 {
            amount = Decimal(sign: amount.sign, exponent: -exponent, significand: Decimal(units.magnitude))
        }
        self.init(amount: amount, currency: currency)
    }
}

/// A refunded or revoked purchase seen in a source's answer (CONTRACT "Finance figures" refund review): kept once per store
/// transaction. Never a tier action.
public struct SeenRefund: Sendable, Codable, Hashable {
    /// The store the purchase was made in (`app_store`, `play_store`, `stripe`, ...).
    public var store: String
    /// The store's transaction id (or, without one, the product and refund instant: still one key per refund).
    public var transactionID: String
    public var refundedAt: Date
    /// What was paid for the refunded purchase, when stated (family shared and trials: 0).
    public var amount: Decimal?
    public var currency: String?

    public init(store: String, transactionID: String, refundedAt: Date, amount: Decimal?, currency: String?) {
        self.store = store
        self.transactionID = transactionID
        self.refundedAt = refundedAt
        self.amount = amount
        self.currency = currency
    }

    /// The refunds among `purchases` (refunded at or before `asOf`), one per store transaction, in a stable order.
    public static func of(_ purchases: [PurchaseFact], asOf: Date) -> [SeenRefund] {
        var seen: [String: SeenRefund] = [:]
        for purchase in purchases {
            guard let refundedAt = purchase.refundedAt, refundedAt <= asOf else { continue }
            let id =
                [purchase.refundTransactionID, purchase.storeTransactionID, purchase.originalTransactionID].compactMap { $0 }
                .first { !$0.isEmpty }
                ?? "\(purchase.productID)@\(Int64(refundedAt.timeIntervalSince1970))"
            let price = FinancePrice.of(purchase, for: .refund)
            let refund = SeenRefund(
                store: purchase.store.rawValue, transactionID: id, refundedAt: refundedAt, amount: price.amount,
                currency: price.currency)
            let key = "\(refund.store)|\(id)"
            if let earlier = seen[key], earlier.refundedAt <= refundedAt { continue }
            seen[key] = refund
        }
        return seen.values.sorted { ($0.store, $0.transactionID) < ($1.store, $1.transactionID) }
    }
}

/// One user on the refund review list (CONTRACT "Finance figures"): how many refunds were seen in the window, in which stores, and
/// when the first and last were. A list for a person to look at, never a tier action.
public struct RefundReviewEntry: Sendable, Hashable {
    public var userID: String
    public var refunds: Int
    /// The stores, sorted.
    public var stores: [String]
    public var firstRefund: Date
    public var lastRefund: Date

    public init(userID: String, refunds: Int, stores: [String], firstRefund: Date, lastRefund: Date) {
        self.userID = userID
        self.refunds = refunds
        self.stores = stores
        self.firstRefund = firstRefund
        self.lastRefund = lastRefund
    }
}
