import Foundation

// Each store over RevenueCat for its own purchases, about the same purchase line only.

extension Decision {
    /// Replaces RevenueCat's view of a store's purchase with the store's own (CONTRACT "Sources and the decision": each store is the authority for
    /// its own purchases), recording disagreements, about the same purchase line only (CONTRACT "Whose purchase it is"): a store's purchase
    /// matches a RevenueCat purchase of the same store whose line shares a key (of the same product when several do).
    /// A store's answer about another line (an older token, another original transaction) stands beside RevenueCat's
    /// entries as evidence about that line alone; a RevenueCat entry naming no line is matched by nothing.
    static func merge(
        revenueCat: [PurchaseFact], stores: [StoreFact], asOf: Date
    ) -> ([PurchaseFact], [SourceConflict]) {
        var purchases = revenueCat
        var conflicts: [SourceConflict] = []
        var replaced = Set<Int>()
        for fact in stores {
            var storePurchase = fact.purchase
            storePurchase.line = fact.line
            let sameLine = purchases.indices.filter { index in
                !replaced.contains(index) && purchases[index].origin == .revenueCat && purchases[index].isSameLine(as: storePurchase)
            }
            let sameProduct = sameLine.first { index in
                let productID = purchases[index].productID
                let base = productID.split(separator: ":", maxSplits: 1).first.map(String.init) ?? productID
                return productID == storePurchase.productID || base == storePurchase.productID
            }
            guard let index = sameProduct ?? sameLine.first else {
                purchases.append(storePurchase)
                continue
            }
            replaced.insert(index)
            let rc = purchases[index]
            if let rcJudgement = judge(rc, asOf: asOf).known, let storeJudgement = judge(storePurchase, asOf: asOf).known,
                rcJudgement.entitled != storeJudgement.entitled || rcJudgement.status != storeJudgement.status
            {
                conflicts.append(
                    SourceConflict(
                        store: storePurchase.origin, originalTransactionID: storePurchase.originalTransactionID,
                        productID: storePurchase.productID, revenueCat: rcJudgement, storeView: storeJudgement))
            }
            if storePurchase.price == nil { storePurchase.price = rc.price }
            if storePurchase.renewalPrice == nil { storePurchase.renewalPrice = rc.renewalPrice }
            if storePurchase.ownership == nil { storePurchase.ownership = rc.ownership }
            if storePurchase.periodType == nil { storePurchase.periodType = rc.periodType }
            purchases[index] = storePurchase
        }
        return (purchases, conflicts)
    }
}
