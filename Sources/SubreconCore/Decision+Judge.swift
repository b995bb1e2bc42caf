import Foundation

// Judging one purchase at T from what its source stated, and the evidence a user's purchases make together.

/// How one purchase stands at T: judged from what its source stated, or unknown, naming what is missing.
public enum Judged: Sendable, Hashable {
    case known(PurchaseJudgement)
    /// The stated facts do not decide the purchase: it may neither entitle nor end anything.
    case unknown(String)

    public var known: PurchaseJudgement? {
        if case .known(let judgement) = self { return judgement }
        return nil
    }
}

extension Decision {
    /// Judges one purchase at `asOf` (CONTRACT "Sources and the decision", per subscription) from what its source stated, and nothing else.
    ///
    /// A subscription or non-renewing purchase without a stated end is unknown, never lifetime; only a purchase the
    /// source states is non-expiring entitles without an end. A refund counts only for the period it falls in (at or
    /// after the period's start). A store's own state (Apple's `status`) is evidence: revoked never entitles, billing
    /// grace entitles without renewal info, expired never entitles.
    public static func judge(_ purchase: PurchaseFact, asOf: Date) -> Judged {
        let expires = purchase.expiresDate
        func known(_ entitled: Bool, _ status: SubscriptionStatus, _ end: Date?) -> Judged {
            .known(PurchaseJudgement(entitled: entitled, status: status, expiresDate: end))
        }
        if purchase.storeState == .revoked { return known(false, .refunded, expires) }
        if let refunded = purchase.refundedAt, refunded <= asOf {
            // A refund dated before this period's start belongs to an earlier period: it does not revoke this one.
            // A lifetime purchase has one period: without a stated start, its refund is its own.
            if let start = purchase.purchaseDate {
                if refunded >= start { return known(false, .refunded, purchase.kind == .nonExpiring ? nil : expires) }
            } else if purchase.kind == .nonExpiring {
                return known(false, .refunded, nil)
            } else {
                return .unknown("a refund is stated without the start of the period it would revoke")
            }
        }
        switch purchase.storeState {
        case .expired?: return known(false, .expired, expires)
        case .pending?: return known(false, .expired, expires)
        case .paused?: return known(false, .paused, expires)
        default: break
        }
        switch purchase.kind {
        case .nonExpiring: return known(true, .active, nil)
        case .unstated: return .unknown("the source did not state whether the purchase expires")
        case .subscription, .nonRenewing: break
        }
        guard let expires else {
            let what = purchase.kind == .subscription ? "a subscription" : "a non-renewing purchase"
            return .unknown("\(what) without a stated expiry date")
        }
        let billingIssueStated =
            purchase.storeState == .billingRetry || purchase.storeState == .gracePeriod
            || purchase.billingIssueDetectedAt.map { $0 <= asOf } == true
        if purchase.storeState == .active && expires <= asOf {
            return .unknown("the store says active, but the stated period ended at \(ISO8601.string(expires))")
        }
        if expires > asOf {
            let status: SubscriptionStatus =
                billingIssueStated ? .billingIssue : (purchase.autoRenew == false ? .canceled : .active)
            return known(true, status, expires)
        }
        if purchase.storeState == .gracePeriod {
            // The store says the user is in billing grace: entitled, with or without a stated grace end.
            if purchase.gracePeriodExpiresDate.map({ $0 > asOf }) ?? true { return known(true, .billingIssue, expires) }
        }
        if let grace = purchase.gracePeriodExpiresDate, grace > asOf { return known(true, .billingIssue, expires) }
        if purchase.isPaused { return known(false, .paused, expires) }
        return known(false, .expired, expires)
    }
}

/// The purchase granting the truth's tier, with its judgement.
typealias Granting = (purchase: PurchaseFact, judgement: PurchaseJudgement, tier: Int)

/// Entitled products missing from `product_tiers`.
struct UnknownProducts: Error {
    var products: [String]
}

/// The user's purchases, each judged at T and kept by what its stated facts allow: judged (known), undecidable (unknown), and the
/// drift found on the way (a sandbox purchase that would have entitled).
struct Evidence {
    var considered: [(purchase: PurchaseFact, judgement: PurchaseJudgement)] = []
    var unknowns: [(purchase: PurchaseFact, reason: String)] = []
    var drift = Set<Drift>()

    /// Sandbox purchases never entitle in a production run; neither does one whose environment is unstated.
    static func judging(_ purchases: [PurchaseFact], context: DecisionContext) -> Evidence {
        var evidence = Evidence()
        for purchase in purchases {
            let judged = Decision.judge(purchase, asOf: context.asOf)
            if context.environment == .production && purchase.isSandbox != false {
                guard let judgement = judged.known else {
                    if purchase.isSandbox == nil { evidence.unknowns.append((purchase, "environment (is_sandbox) not stated")) }
                    continue
                }
                if judgement.entitled {
                    if purchase.isSandbox == true {
                        evidence.drift.insert(.sandboxIgnored)
                    } else {
                        evidence.unknowns.append((purchase, "entitled, but its environment (is_sandbox) is not stated"))
                    }
                    continue
                }
                if purchase.isSandbox == true { continue }
            }
            switch judged {
            case .known(let judgement): evidence.considered.append((purchase, judgement))
            case .unknown(let reason): evidence.unknowns.append((purchase, reason))
            }
        }
        return evidence
    }

    /// The highest tier among entitled purchases (ties: later end); an entitled product missing from the catalog fails.
    func granting(catalog: ProductCatalog) -> Result<Granting?, UnknownProducts> {
        var granting: Granting?
        var unknownProducts: [String] = []
        for (purchase, judgement) in considered where judgement.entitled {
            guard let tier = catalog.tier(for: purchase.productID) else {
                unknownProducts.append(purchase.productID)
                continue
            }
            if let current = granting,
                tier < current.tier || (tier == current.tier && Decision.endKey(purchase) <= Decision.endKey(current.purchase))
            {
                continue
            }
            granting = (purchase, judgement, tier)
        }
        return unknownProducts.isEmpty ? .success(granting) : .failure(UnknownProducts(products: unknownProducts.sorted()))
    }
}
