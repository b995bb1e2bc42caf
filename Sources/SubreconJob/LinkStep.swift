import Foundation
import SubreconCore
import SubreconPorts

/// CONTRACT "Whose purchase it is" linking: of the purchases a feed or an inventory stated, those whose identifier no row holds are linked
/// to the user whose id or `account_token` their store named as the buyer (that user becomes a candidate,
/// `linked_purchase`, and the identifier is written with the change); those naming no known account (or an account
/// more than one row claims) are orphans when they entitle today: listed, never acted on.
struct LinkStep: Sendable {
    var links: any PurchaseLinks
    var options: RunOptions

    /// What one read's purchases came to.
    struct Outcome: Sendable {
        /// Links of users in this run's shard.
        var links: [PurchaseLink] = []
        var orphans: [Orphan] = []
    }

    /// Links and orphans among `purchases`, whose identifiers would be held in `column`. Reads only.
    func resolve(_ purchases: [UnlinkedPurchase], column: FeedColumn) async throws -> Outcome {
        guard !purchases.isEmpty else { return Outcome() }
        let held = try await links.heldIdentifiers(column: column, identifiers: Array(Set(purchases.map(\.identifier))))
        // One purchase per identifier: the one whose period is latest (a feed may name a line several times).
        var latest: [String: UnlinkedPurchase] = [:]
        for purchase in purchases where !held.contains(purchase.identifier) && !purchase.identifier.isEmpty {
            if let current = latest[purchase.identifier], Self.recency(current) >= Self.recency(purchase) { continue }
            latest[purchase.identifier] = purchase
        }
        let unlinked = latest.values.sorted { ($0.origin.rawValue, $0.identifier) < ($1.origin.rawValue, $1.identifier) }
        let accounts = Set(unlinked.compactMap(\.purchase.buyer.account))
        let owners = accounts.isEmpty ? [:] : try await links.owners(ofAccounts: accounts.sorted())
        var outcome = Outcome()
        for purchase in unlinked {
            let claimed = purchase.purchase.buyer.account.flatMap { owners[$0] } ?? []
            if claimed.count == 1, let user = claimed.first {
                // A production run never links a sandbox purchase (nor one whose environment is unstated).
                if options.environment == .production && purchase.purchase.isSandbox != false { continue }
                if options.shard.contains(user) {
                    outcome.links.append(PurchaseLink(userID: user, origin: purchase.origin, identifier: purchase.identifier))
                }
                continue
            }
            if let orphan = purchase.orphan(asOf: options.asOf, environment: options.environment) {
                outcome.orphans.append(orphan)
            }
        }
        return outcome
    }

    private static func recency(_ purchase: UnlinkedPurchase) -> Date {
        purchase.purchase.expiresDate ?? purchase.purchase.purchaseDate ?? .distantPast
    }
}
