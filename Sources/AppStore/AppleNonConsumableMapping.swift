import Foundation
import SubreconCore

/// Apple's verified history transactions → non-expiring facts (CONTRACT "Sources and the decision": an Apple transaction of `type`
/// `Non-Consumable`). Pure; the verification happens before (`AppStoreClient.nonConsumableFacts`).
///
/// | transaction                                   | fact                                                       |
/// |-----------------------------------------------|------------------------------------------------------------|
/// | `type` `Non-Consumable`                       | `kind: .nonExpiring`, line = original transaction id        |
/// | with `revocationDate`                         | `refundedAt` = it (ends the line from that instant on)      |
/// | any other `type` (or none)                    | none (the subscription path reads subscriptions)           |
/// | Non-Consumable without an original transaction id or product id | error (fetch) for the user              |
///
/// `environment` → `isSandbox`; `price`/`currency` (milliunits) → `price` when both are stated and not negative. A
/// transaction Apple sends twice (history is sorted by modification: an updated one comes again) counts once, as
/// its last version.
public enum AppleNonConsumableMapping {
    public static let type = "Non-Consumable"

    public static func storeFacts(
        _ transactions: [(payload: JWSTransactionDecodedPayload, signer: String?)], lookup: String
    ) -> Result<[StoreFact], SourceError> {
        var order: [String] = []
        var latest: [String: StoreFact] = [:]
        for (transaction, signer) in transactions where transaction.type == type {
            guard let original = transaction.originalTransactionId, !original.isEmpty,
                let product = transaction.productId, !product.isEmpty
            else {
                return .failure(
                    SourceError(
                        origin: .appStore, kind: .fetch,
                        message: "App Store Server API: a Non-Consumable transaction without an original transaction id or product id"))
            }
            guard var fact = try? AppleSubscriptionMapping.purchaseFact(status: nil, transaction: transaction, renewal: nil) else {
                continue  // never thrown without a status
            }
            fact.kind = .nonExpiring
            fact.expiresDate = nil
            fact.autoRenew = false
            // A revocation is dated: the core judges the line revoked from `refundedAt` on, so a run judging an
            // instant before it still sees the purchase (CONTRACT "Deciding the truth").
            let key = transaction.transactionId.flatMap { $0.isEmpty ? nil : $0 } ?? original
            if latest[key] == nil { order.append(key) }
            latest[key] = StoreFact(lookupID: lookup, purchase: fact, signedBy: signer)
        }
        return .success(order.compactMap { latest[$0] })
    }
}
