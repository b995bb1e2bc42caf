import Foundation

// `explain`'s purchase lines (CONTRACT "Commands", "Whose purchase it is"): each line, its keys, the sources that spoke about it, whose it is
// and why, and whether it was linked tonight, names a newer identifier than the row's, or is in conflict.

extension Explanation {
    /// One purchase line as `explain` shows it.
    public struct Line: Sendable, Codable, Hashable {
        /// The store the line is in (`app_store`, `play_store`, `stripe`, ...).
        public var store: String
        /// Every id known to name the line, sorted.
        public var keys: [String]
        /// The sources that spoke about it, in the order asked (`revenuecat`, `app_store`, ...).
        public var sources: [String]
        /// Whose line it is, and why.
        public var owner: String
        /// `linked` (a purchase no row named, linked tonight), `stale` (the row names an older identifier of it),
        /// `conflict` (another buyer, or a link over a different identifier), or nil.
        public var standing: String?
    }

    /// The lines `facts` speak about for `row`: RevenueCat's entries and the stores' facts grouped by shared key.
    static func lines(row: UserRow, facts: SourceFacts) -> [Line] {
        var groups: [(line: PurchaseLine, origins: [FactOrigin], accounts: [BuyerAccount])] = []
        func add(_ line: PurchaseLine?, _ origin: FactOrigin, _ account: BuyerAccount?) {
            guard let line else { return }
            if let index = groups.firstIndex(where: { $0.line.isSame(as: line) }) {
                groups[index].line = groups[index].line.adding(line.keys)
                if !groups[index].origins.contains(origin) { groups[index].origins.append(origin) }
                if let account { groups[index].accounts.append(account) }
            } else {
                groups.append((line, [origin], account.map { [$0] } ?? []))
            }
        }
        for purchase in facts.revenueCatPurchases { add(purchase.purchaseLine, purchase.origin, nil) }
        for fact in facts.stores { add(fact.line, fact.purchase.origin, fact.purchase.buyer.account) }
        return groups.map { group in
            let keys = group.line.keys.sorted()
            let (owner, foreign) = ownerText(row: row, store: group.line.store, keys: group.line.keys, group.origins, group.accounts)
            return Line(
                store: group.line.store.rawValue, keys: keys, sources: group.origins.map(\.rawValue), owner: owner,
                standing: standing(row: row, keys: group.line.keys, foreign: foreign))
        }
    }

    private static func ownerText(
        row: UserRow, store: StoreKind, keys: Set<String>, _ origins: [FactOrigin], _ accounts: [BuyerAccount]
    ) -> (String, Bool) {
        if let other = accounts.first(where: { !Decision.isOwnAccount($0, row: row) }) {
            return ("another buyer: the store names account \(other.value), neither the user id nor the row's account_token", true)
        }
        if let own = accounts.first { return ("this user: the store names the buyer's account \(own.value)", false) }
        let named = [row.originalTransactionID].compactMap { $0 } + row.identifiers.values
        if named.contains(where: keys.contains) { return ("this user: the row names it", false) }
        if row.links.values.contains(where: keys.contains) { return ("this user: linked tonight", false) }
        if origins.contains(.revenueCat) { return ("this user: RevenueCat attributes it to them", false) }
        return ("this user: asked with the row's identifiers", false)
    }

    private static func standing(row: UserRow, keys: Set<String>, foreign: Bool) -> String? {
        if foreign { return "conflict" }
        for (origin, linked) in row.links where keys.contains(linked) {
            guard let current = Decision.rowIdentifier(origin, row: row), current != linked else { return "linked" }
            return keys.contains(current) ? "stale" : "conflict"
        }
        return nil
    }

    /// The lines as text for a terminal.
    var lineTexts: [String] {
        lines.map { line in
            "    \(line.store) \(line.keys.joined(separator: " = ")) [\(line.sources.joined(separator: ", "))]: "
                + line.owner + (line.standing.map { " (\($0))" } ?? "")
        }
    }
}
