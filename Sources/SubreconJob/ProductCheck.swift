import Foundation
import Logging
import SubreconCore
import SubreconReports

/// `subrecon products check`: products seen in the latest run that `product_tiers` does not map.
///
/// Reads `REPORT_DIR/latest/drift.json`: every row's `product_id`, and the products named by `unknown_product`
/// rows (the entitled products the decision could not map, listed in the row's `error`). Findings are warnings,
/// never failures: the job already leaves such users untouched.
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

    /// The prefix of the `error` of an `unknown_product` row, followed by `, `-separated product ids.
    static let unknownPrefix = "entitled product(s) missing from product_tiers: "

    /// Compares the latest run folder under `reportDirectory` with `catalog`. A missing folder is a usage error.
    public static func check(reportDirectory: URL, catalog: ProductCatalog) throws -> ProductCheck {
        let drift = reportDirectory.appendingPathComponent("latest").appendingPathComponent("drift.json")
        guard let data = FileManager.default.contents(atPath: drift.path) else {
            throw CommandFailure(.usage, "no latest run under \(reportDirectory.path) (\(drift.path) missing); run subrecon run first")
        }
        let rows: [ReportRow]
        do {
            rows = try JSONDecoder().decode([ReportRow].self, from: data)
        } catch {
            throw CommandFailure(.usage, "cannot read \(drift.path): not a drift report")
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
            if row.drift.contains(Drift.unknownProduct.rawValue), let error = row.error, error.hasPrefix(unknownPrefix) {
                for product in error.dropFirst(unknownPrefix.count).split(separator: ",") {
                    let id = product.trimmingCharacters(in: .whitespaces)
                    if id.isEmpty { continue }
                    products.insert(id)
                    skipped[id, default: 0] += 1
                }
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
