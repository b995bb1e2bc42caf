import AppStore
import Foundation
import SubreconCore
import SubreconJob
import SubreconPorts

extension AppStoreSource {
    /// What the receipt bridge did for one user.
    enum ReceiptOutcome: Sendable {
        /// No bridge, no stored receipt, or a receipt without a subscription: carry on as before.
        case untouched
        /// The receipt revealed this original transaction id: ask the App Store Server API about it.
        case revealed(String)
        /// The facts are complete (the receipt's facts stand in for Apple's, or an error was recorded).
        case settled
    }

    /// An App Store candidate: the row says `apple_iap`, RevenueCat lists an App Store subscription, or RevenueCat
    /// was not asked (an Apple-only app: any user may have a stored receipt).
    static func isAppStoreCandidate(row: UserRow, facts: SourceFacts) -> Bool {
        row.source == StoreKind.appStore.subscriptionSource || facts.revenueCatPurchases.contains(where: \.isAppStoreSubscription)
            || !facts.asked.contains(.revenueCat)
    }

    /// The legacy bridge for an App Store candidate with no transaction id anywhere: verify the stored receipt.
    ///
    /// RevenueCat's App Store subscriptions that carry no id are tied to the revealed original transaction id, so
    /// Apple's view replaces them and the id reaches `users.iap_original_transaction_id` through the verdict.
    /// Without the App Store Server API, the receipt's own facts are used as Apple's.
    func receiptLookup(row: UserRow, facts: inout SourceFacts) async -> ReceiptOutcome {
        guard let receiptVerifier, let receipts else { return .untouched }
        let receipt: String?
        do {
            receipt = try await receipts.receipt(for: row.id)
        } catch {
            facts.errors.append(SourceError(origin: .appStore, kind: .fetch, message: "stored receipt could not be read: \(error)"))
            return .settled
        }
        guard let receipt else { return .untouched }
        facts.noteAsked(.appStoreReceipt)
        switch await receiptVerifier.verify(receiptData: receipt, productID: row.productID) {
        case .failure(let error):
            facts.errors.append(error)
            return .settled
        case .success(let answer):
            guard let revealed = answer.originalTransactionID else { return .untouched }
            for index in facts.revenueCatPurchases.indices {
                let purchase = facts.revenueCatPurchases[index]
                guard purchase.isAppStoreSubscription, purchase.originalTransactionID == nil,
                    purchase.storeTransactionID == nil
                else { continue }
                let sameProduct = answer.purchases.first { $0.productID == purchase.productID }
                facts.revenueCatPurchases[index].originalTransactionID = sameProduct?.originalTransactionID ?? revealed
            }
            if appStore != nil { return .revealed(revealed) }
            facts.stores += answer.purchases.map {
                StoreFact(lookupID: $0.originalTransactionID ?? revealed, purchase: $0)
            }
            return .settled
        }
    }
}
