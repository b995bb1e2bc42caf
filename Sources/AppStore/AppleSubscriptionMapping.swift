import Foundation
import SubreconCore

/// A verified Apple payload whose dates contradict its own status: believed neither way.
public struct AppleStatusContradiction: Error, Sendable, Hashable, CustomStringConvertible {
    public var status: Int
    public var detail: String
    public var description: String { "status \(status) contradicts the signed payload: \(detail)" }
}

/// Turns Apple's verified payloads into the core's `PurchaseFact` (origin and store `.appStore`).
///
/// Only what Apple stated is carried over (apple.md §1.5): the status (1 active, 2 expired, 3 billing retry, 4 billing
/// grace period, 5 revoked) becomes `storeState`, evidence on its own; the transaction `type` decides the kind
/// (`Non-Consumable` is non-expiring, `Non-Renewing Subscription` a pass, anything else a subscription); a missing
/// `environment` leaves `isSandbox` unknown. A billing issue is dated at `expiresDate` when Apple is retrying
/// (status 3/4 or `isInBillingRetryPeriod`). Dates that contradict the status at the payload's own `signedDate`
/// are an `AppleStatusContradiction` (reported as `verification_failed`).
public enum AppleSubscriptionMapping {
    public static func purchaseFact(
        status: Int?, transaction: JWSTransactionDecodedPayload, renewal: JWSRenewalInfoDecodedPayload?
    ) throws(AppleStatusContradiction) -> PurchaseFact {
        let state = status.flatMap(StoreState.init(appleStatus:))
        try checkConsistency(status: status, state: state, transaction: transaction, renewal: renewal)
        let billingRetry = renewal?.isInBillingRetryPeriod == true || state == .billingRetry || state == .gracePeriod
        let kind: PurchaseKind =
            switch transaction.type {
            case "Non-Consumable": .nonExpiring
            case "Non-Renewing Subscription": .nonRenewing
            case "Consumable": .unstated
            default: .subscription
            }
        let (price, renewalPrice) = prices(transaction: transaction, renewal: renewal)
        let isSandbox: Bool? =
            switch transaction.environment {
            case StoreEnvironmentName.sandbox.rawValue?: true
            case StoreEnvironmentName.production.rawValue?: false
            default: nil
            }
        let fact = PurchaseFact(
            origin: .appStore,
            productID: transaction.productId ?? renewal?.productId ?? "",
            store: .appStore,
            kind: kind,
            isSandbox: isSandbox,
            purchaseDate: transaction.purchaseDate,
            expiresDate: transaction.expiresDate,
            gracePeriodExpiresDate: renewal?.gracePeriodExpiresDate,
            refundedAt: transaction.revocationDate,
            billingIssueDetectedAt: billingRetry ? transaction.expiresDate : nil,
            autoRenew: renewal?.autoRenewStatus.flatMap { $0 == 1 ? true : ($0 == 0 ? false : nil) },
            storeState: state,
            originalTransactionID: transaction.originalTransactionId,
            storeTransactionID: transaction.transactionId,
            price: price, renewalPrice: renewalPrice, ownership: ownership(transaction.inAppOwnershipType),
            periodType: periodType(transaction),
            line: PurchaseLine.of(store: .appStore, ids: [transaction.originalTransactionId, transaction.transactionId]),
            // The buyer's account, only when it is a UUID (`AppAccountToken`); otherwise not stated.
            buyer: .stated(transaction.appAccountToken?.uuid, store: .appStore))
        return fact
    }

    /// What was paid (the transaction's `price`, an offer or introductory price when that was charged) and the next
    /// renewal's price (`signedRenewalInfo.renewalPrice`), each in milliunits of its own `currency`; each nil when
    /// Apple did not state it with a currency. Neither stands in for the other (CONTRACT "Finance figures").
    public static func prices(
        transaction: JWSTransactionDecodedPayload, renewal: JWSRenewalInfoDecodedPayload?
    ) -> (paid: Money?, renewal: Money?) {
        func money(_ milliunits: Int64?, _ currency: String?) -> Money? {
            guard let milliunits, milliunits >= 0, let currency, !currency.isEmpty else { return nil }
            return Money(units: milliunits, exponent: 3, currency: currency)
        }
        return (money(transaction.price, transaction.currency), money(renewal?.renewalPrice, renewal?.currency))
    }

    /// `inAppOwnershipType`: `PURCHASED` or `FAMILY_SHARED`; nil for anything else.
    public static func ownership(_ text: String?) -> Ownership? {
        switch text {
        case "PURCHASED": .purchased
        case "FAMILY_SHARED": .familyShared
        default: nil
        }
    }

    /// The transaction's period: a `FREE_TRIAL` offer discount is a trial, any other offer (`offerType` 1
    /// introductory, 2 promotional, 3 offer code, 4 win-back) an intro/offer price, none a normal period.
    public static func periodType(_ transaction: JWSTransactionDecodedPayload) -> PeriodType {
        if transaction.offerDiscountType == "FREE_TRIAL" { return .trial }
        return transaction.offerType == nil ? .normal : .intro
    }

    /// The dates Apple signed must agree with the status it answered, at the instant it signed them.
    static func checkConsistency(
        status: Int?, state: StoreState?, transaction: JWSTransactionDecodedPayload, renewal: JWSRenewalInfoDecodedPayload?
    ) throws(AppleStatusContradiction) {
        guard let status else { return }
        guard let state else { throw AppleStatusContradiction(status: status, detail: "not a status Apple documents (1-5)") }
        guard let signed = transaction.signedDate else { return }
        let expires = transaction.expiresDate
        switch state {
        case .active:
            if let expires, expires <= signed {
                throw AppleStatusContradiction(status: status, detail: "active, but expired before it was signed")
            }
            if transaction.revocationDate.map({ $0 <= signed }) == true {
                throw AppleStatusContradiction(status: status, detail: "active, but revoked before it was signed")
            }
        case .expired, .billingRetry:
            if let expires, expires > signed, transaction.revocationDate == nil {
                throw AppleStatusContradiction(status: status, detail: "not active, but its period runs past the instant it was signed")
            }
        case .gracePeriod:
            if let grace = renewal?.gracePeriodExpiresDate, grace <= (renewal?.signedDate ?? signed) {
                throw AppleStatusContradiction(status: status, detail: "in billing grace, but the grace period ended before it was signed")
            }
        case .revoked, .paused, .pending:
            break
        }
    }
}
