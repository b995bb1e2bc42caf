import Foundation

// Whose purchase it is (CONTRACT "Whose purchase it is"): ownership, linking and stale identifiers, pure.

extension Decision {
    /// True when `stated`, the buyer's account a store named, is this row's: its user id or its `account_token`. An
    /// Apple `appAccountToken` is a UUID, compared case-insensitively; the other stores' values exactly (`BuyerAccount`).
    public static func isOwnAccount(_ stated: BuyerAccount, row: UserRow) -> Bool {
        stated.matches(row.id) || stated.matches(row.accountToken)
    }

    /// The row's identifier for `origin`'s column: Apple's original transaction id, else the store's own column.
    static func rowIdentifier(_ origin: FactOrigin, row: UserRow) -> String? {
        origin.authorityStore?.isApple == true ? row.originalTransactionID : row.identifiers[origin]
    }

    /// The verdict for a row a store's answer does not belong to (CONTRACT "Whose purchase it is"), or nil: a store fact naming a buyer's
    /// account that is neither the user's id nor the row's `account_token`, or a purchase linked tonight whose
    /// identifier would overwrite a different one in the row (not a newer identifier of the same line). Untouched,
    /// `ownership_conflict`, listed for a person, whatever else the sources say.
    static func ownershipConflict(row: UserRow, facts: SourceFacts) -> Verdict? {
        var reasons: [String] = []
        for fact in facts.stores {
            guard let account = fact.purchase.buyer.account, !isOwnAccount(account, row: row) else {
                continue
            }
            let key = fact.purchase.originalTransactionID ?? fact.lookupID
            reasons.append(
                "\(fact.purchase.origin.rawValue): purchase \(key) names another buyer account, neither the user id nor the "
                    + "row's account_token")
        }
        for (identifier, others) in facts.claimedElsewhere.sorted(by: { $0.key < $1.key }) {
            reasons.append(
                "revenuecat: does not list purchase \(identifier), which the row names, while other rows name it too "
                    + "(\(others.joined(separator: ", ")))")
        }
        for (origin, linked) in row.links.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
            guard let current = rowIdentifier(origin, row: row), current != linked,
                !facts.stores.contains(where: { $0.identifiers.contains(linked) && $0.line?.keys.contains(current) == true })
            else { continue }
            reasons.append(
                "\(origin.rawValue): a purchase linked to this user (\(linked)) would overwrite the different identifier the "
                    + "row holds (\(current))")
        }
        guard !reasons.isEmpty else { return nil }
        return Verdict(
            row: row, truth: nil, action: .skipped, sources: facts.asked, drift: [.ownershipConflict],
            error: .ownership(reasons))
    }

    /// Sets `truth`'s store identifiers to the row's, writes into them the identifiers CONTRACT "Whose purchase it is" has the change write, and returns their drift kinds: a purchase
    /// linked tonight that its store answered about (`linked_purchase` into an empty column, `stale_identifier` over an
    /// older identifier of the same line), and the App Store original transaction of the line that entitles now when the
    /// row names an older one (`stale_identifier`). Each identifier goes only into its own store's column; a production
    /// run never writes the identifier of a sandbox purchase (nor of one whose environment is unstated).
    static func writeIdentifiers(
        into truth: inout Entitlement, row: UserRow, facts: SourceFacts, granting: PurchaseFact?, environment: StoreEnvironment
    ) -> Set<Drift> {
        var drift = Set<Drift>()
        truth.storeIdentifiers = row.identifiers
        let usable = facts.stores.filter { environment != .production || $0.purchase.isSandbox == false }
        for (origin, linked) in row.links {
            let current = rowIdentifier(origin, row: row)
            // A store's answer about the link: one naming it, or (the row naming nothing of the store's) any answer of
            // the store, which was asked with the link (a Stripe customer names no line: its answers name subscriptions).
            guard usable.contains(where: { $0.identifiers.contains(linked) || (current == nil && $0.purchase.origin == origin) })
            else { continue }
            guard current != linked else { continue }
            if origin.authorityStore?.isApple == true {
                guard [nil, current, linked].contains(truth.originalTransactionID) else { continue }
                truth.originalTransactionID = linked
            } else {
                truth.storeIdentifiers[origin] = linked
            }
            drift.insert(current == nil ? .linkedPurchase : .staleIdentifier)
        }
        if truth.tier > 0, let granting, granting.store.isApple, let newer = granting.originalTransactionID,
            let older = row.originalTransactionID, newer != older, truth.originalTransactionID == newer
        {
            drift.insert(.staleIdentifier)
        }
        return drift
    }
}
