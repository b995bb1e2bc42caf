import SubreconCore

/// The rows of `product_tiers` as the job uses them, checked when they are loaded as `products import` checks a file
/// (docs/CONTRACT.md, "Commands"): a row an older importer or a hand-written statement left (a tier outside 0…1000,
/// a product id or entitlement holding a byte order mark or another control character) refuses `run` and `explain`
/// with one line naming the product and the fix (78), before any store is asked — never read as "no tier", which
/// would downgrade the users whose purchase it maps.
public enum StoredCatalog {
    /// The highest tier a product may grant: `products import` refuses a higher one in a file, and a run a stored row
    /// holding one.
    public static let maximumTier = 1000

    /// What is wrong with each row `products import` would refuse, ordered by product id; empty when none is.
    public static func problems(_ catalog: ProductCatalog) -> [String] {
        catalog.entries.values.sorted { $0.productID.unicodeScalars.lexicographicallyPrecedes($1.productID.unicodeScalars) }
            .compactMap(problem)
    }

    static func problem(_ entry: ProductCatalog.Entry) -> String? {
        let product = visible(entry.productID)
        if entry.productID.isEmpty { return "a product id is empty" }
        if let scalar = OperatorText.control(in: entry.productID) {
            return "product id \(product) holds the control character \(OperatorText.name(scalar))"
        }
        guard (0...maximumTier).contains(entry.tier) else {
            return "product \(product) has tier \(entry.tier), not an integer 0…\(maximumTier)"
        }
        if let entitlement = entry.entitlement, let scalar = OperatorText.control(in: entitlement) {
            return "product \(product)'s entitlement holds the control character \(OperatorText.name(scalar))"
        }
        return nil
    }

    /// `value` quoted, each scalar `OperatorText.control` names written as `\u{FEFF}` (a byte order mark is invisible
    /// in a terminal, and Swift's `debugDescription` prints it as is).
    static func visible(_ value: String) -> String {
        var text = "\""
        for scalar in value.unicodeScalars {
            if OperatorText.control(in: String(scalar)) != nil {
                text += "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
            } else if scalar == "\"" || scalar == "\\" {
                text += "\\" + String(scalar)
            } else {
                text.unicodeScalars.append(scalar)
            }
        }
        return text + "\""
    }

    /// `catalog` when every row is one `products import` accepts; else a configuration error (78) naming the first
    /// bad row and the fix.
    public static func checked(_ catalog: ProductCatalog) throws -> ProductCatalog {
        let found = problems(catalog)
        guard let first = found.first else { return catalog }
        let more = found.count > 1 ? " (and \(found.count - 1) more row\(found.count > 2 ? "s" : ""))" : ""
        throw CommandFailure(
            .config,
            "product_tiers holds a row `products import` refuses: \(first)\(more); write the whole mapping again with "
                + "`subrecon products import --replace FILE` (rows not in FILE are deleted); nothing done")
    }
}
