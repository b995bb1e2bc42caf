import Foundation
import Logging
import SubreconCore
import SubreconReports

/// `subrecon products check`: products seen in the latest run that `product_tiers` does not map.
///
/// Reads `REPORT_DIR/latest/drift.json`: every row's `product_id`, and the products `unknown_product` rows list in
/// `missing_products` (the entitled products the decision could not map). Findings are warnings,
/// never failures: the job already leaves such users untouched. No run yet (a fresh install) or a file that is not a
/// drift report is said in one line, and the command still exits 0 (docs/CONTRACT.md, "Commands").
public struct ProductCheck: Sendable, Hashable {
    /// One product missing from `product_tiers`.
    public struct Missing: Sendable, Hashable {
        public var productID: String
        /// Users of the run whose row mentions the product.
        public var users: Int
        /// Users skipped because they are entitled through it (`unknown_product`).
        public var skippedUsers: Int
    }

    public var runID: String?
    public var productsSeen: Int
    public var missing: [Missing]
    /// Why nothing was compared (no run yet, an unreadable report), as the one line to print.
    public var note: String?

    /// Compares the latest run folder under `reportDirectory` with `catalog`. No run yet, or a `drift.json` that is
    /// not a drift report, is a `note`: nothing to compare, never a failure (it no longer throws; callers keep `try`).
    public static func check(reportDirectory: URL, catalog: ProductCatalog) throws -> ProductCheck {
        let drift = reportDirectory.appendingPathComponent("latest").appendingPathComponent("drift.json")
        guard let data = FileManager.default.contents(atPath: drift.path) else {
            return ProductCheck(
                runID: nil, productsSeen: 0, missing: [],
                note: "no run yet under \(reportDirectory.path) (\(drift.path) missing): nothing to check; run subrecon run first")
        }
        guard let rows = try? JSONDecoder().decode([ReportRow].self, from: data) else {
            return ProductCheck(
                runID: nil, productsSeen: 0, missing: [], note: "warning: \(drift.path) is not a drift report: nothing checked")
        }
        return check(rows: rows, catalog: catalog)
    }

    /// Compares report rows with `catalog`.
    public static func check(rows: [ReportRow], catalog: ProductCatalog) -> ProductCheck {
        var users: [String: Int] = [:]
        var skipped: [String: Int] = [:]
        for row in rows {
            var products = Set<String>()
            if let product = row.productID, !product.isEmpty { products.insert(product) }
            // The products the decision could not map, as the list the report carries (never its `error` sentence).
            for id in Set(row.missingProducts) where !id.isEmpty {
                products.insert(id)
                skipped[id, default: 0] += 1
            }
            for product in products { users[product, default: 0] += 1 }
        }
        let missing = users.keys.filter { catalog.tier(for: $0) == nil }.sorted().map {
            Missing(productID: $0, users: users[$0] ?? 0, skippedUsers: skipped[$0] ?? 0)
        }
        return ProductCheck(runID: rows.first?.runID, productsSeen: users.count, missing: missing)
    }

    /// The lines `subrecon products check` prints.
    public var lines: [String] {
        if let note { return [note] }
        let run = runID.map { "run \($0)" } ?? "the latest run (no users)"
        var lines = missing.map {
            "warning: product \($0.productID) seen in \(run) (\($0.users) user\($0.users == 1 ? "" : "s"), "
                + "\($0.skippedUsers) skipped as unknown_product) is missing from product_tiers"
        }
        lines.append(
            missing.isEmpty
                ? "ok: all \(productsSeen) products seen in \(run) are in product_tiers"
                : "\(missing.count) of \(productsSeen) products seen in \(run) are missing from product_tiers; add them with subrecon products import"
        )
        return lines
    }
}
