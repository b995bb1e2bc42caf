import Foundation
import Logging
import PostgresNIO
import SubreconCore
import SubreconPorts

extension PostgresCatalog {

    /// The whole `product_tiers` table.
    public func loadCatalog() async throws -> ProductCatalog {
        try await run("load product catalog") {
            var entries: [ProductCatalog.Entry] = []
            let rows = try await session.query(
                "select product_id, tier, entitlement from product_tiers order by product_id", logger: logger)
            for try await (product, tier, entitlement) in rows.decode((String, Int, String?).self) {
                entries.append(.init(productID: product, tier: tier, entitlement: entitlement))
            }
            return ProductCatalog(entries)
        }
    }

    /// Inserts or replaces catalog entries by product id, in one transaction; with `replacing`, the entries become the
    /// whole table (every other row deleted in the same transaction).
    public func upsertProducts(_ entries: [ProductCatalog.Entry], replacing: Bool = false) async throws {
        try await run("upsert products") {
            try await session.withTransaction { connection in
                if replacing { try await connection.run("delete from product_tiers", logger: logger) }
                for entry in entries {
                    try await connection.run(
                        """
                        insert into product_tiers (product_id, tier, entitlement) \
                        values (\(entry.productID), \(entry.tier), \(entry.entitlement)) \
                        on conflict (product_id) do update set tier = excluded.tier, entitlement = excluded.entitlement
                        """, logger: logger)
                }
            }
        }
    }
}
