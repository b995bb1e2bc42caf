import Foundation
import SubreconCore

/// Turns Apple's verified payloads into the core's `PurchaseFact` (origin and store `.appStore`).
///
/// Status (apple.md §1.5): 1 active, 2 expired, 3 billing retry, 4 billing grace period, 5 revoked.
/// A billing issue is dated at `expiresDate` when Apple is retrying (status 3/4 or `isInBillingRetryPeriod`).
public enum AppleSubscriptionMapping {
    public static func purchaseFact(
        status: Int?, transaction: JWSTransactionDecodedPayload, renewal: JWSRenewalInfoDecodedPayload?
    ) -> PurchaseFact {
        let billingRetry = renewal?.isInBillingRetryPeriod == true || status == 3 || status == 4
        let lifetime = transaction.type == "Non-Consumable"
        var price: Money?
        if let milliunits = transaction.price, let currency = transaction.currency {
            price = Money(amount: Decimal(milliunits) / 1000, currency: currency)
        } else if let milliunits = renewal?.renewalPrice, let currency = renewal?.currency {
            price = Money(amount: Decimal(milliunits) / 1000, currency: currency)
        }
        return PurchaseFact(
            origin: .appStore,
            productID: transaction.productId ?? renewal?.productId ?? "",
            store: .appStore,
            isSandbox: transaction.environment == StoreEnvironmentName.sandbox.rawValue,
            isLifetime: lifetime,
            purchaseDate: transaction.purchaseDate,
            expiresDate: transaction.expiresDate,
            gracePeriodExpiresDate: renewal?.gracePeriodExpiresDate,
            refundedAt: transaction.revocationDate ?? (status == 5 ? transaction.signedDate ?? transaction.purchaseDate : nil),
            billingIssueDetectedAt: billingRetry ? transaction.expiresDate : nil,
            autoRenew: renewal.map { $0.autoRenewStatus == 1 },
            originalTransactionID: transaction.originalTransactionId,
            storeTransactionID: transaction.transactionId,
            price: price)
    }
}
