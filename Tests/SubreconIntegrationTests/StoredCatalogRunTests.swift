import Foundation
import PostgresNIO
import StoreSimulator
import SubreconCore
import SubreconJob
import SubreconPorts
import Testing

/// Rows an older importer left in `product_tiers` (docs/CONTRACT.md, "Commands"): `run` and `explain` refuse them
/// (78, naming the product and the fix) before any store is asked, `products check` names them, and
/// `products import --replace` writes the whole mapping again.
@Suite(
    "Bad rows already in product_tiers", .serialized, .enabled(if: Harness.isEnabled, Harness.skip), .timeLimit(.minutes(5)))
struct StoredCatalogRunTests {
    @Test("the binary: a tier of -1 and a BOM-prefixed id refuse run and explain (78), nobody downgraded; import --replace fixes them")
    func refusedThenFixed() async throws {
        try await Harness.with { h in
            // Renewed: with its product at tier 1 the row keeps tier 1; read as "no tier" it would be downgraded.
            try await h.seed(h.row("c-1", tier: 1, "active", end: -2), Harness.subscription(purchased: -2, expires: 28))
            try await h.client.query("update product_tiers set tier = -1 where product_id = 'premium_monthly'")
            try await h.client.query("insert into product_tiers (product_id, tier) values (E'\\ufeffcom.app.x', 1)")
            let run = ["run", "--as-of", ISO8601.string(Harness.asOf), "--apply-past", "--report-dir", h.reportDirectory.path]
            for args in [run, run + ["--dry-run"], ["explain", "c-1", "--as-of", ISO8601.string(Harness.asOf)]] {
                let refused = try await BinaryRun.run(args, environment: h.env.values, directory: h.reportDirectory)
                let line = refused.operatorLines.joined(separator: "\n")
                #expect(refused.status == 78, "\(args[0]): \(refused.stderr)")
                #expect(line.contains("\"premium_monthly\" has tier -1") && line.contains("products import --replace"), "\(line)")
            }
            #expect(await h.revenueCat.counters().totalRequests == 0, "no store asked")
            #expect(try await h.count("select count(*)::int from reconcile_runs") == 0, "nothing recorded")
            #expect(try await h.user("c-1")?.currentTier == 1, "nobody downgraded")

            let check = try await BinaryRun.run(["products", "check"], environment: h.env.values, directory: h.reportDirectory)
            #expect(check.status == 0)
            #expect(check.stdoutText.contains("has tier -1") && check.stdoutText.contains("\\u{FEFF}com.app.x"), "\(check.stdoutText)")

            let file = h.reportDirectory.appendingPathComponent("mapping.csv")
            try Data("product_id,tier,entitlement\npremium_monthly,1,premium\npro_monthly,2,pro\n".utf8).write(to: file)
            let imported = try await BinaryRun.run(
                ["products", "import", "--replace", file.path], environment: h.env.values, directory: h.reportDirectory)
            #expect(imported.status == 0, "\(imported.operatorLines)")
            #expect(try await h.count("select count(*)::int from product_tiers") == 2, "the file is the whole table")
            let fixed = try await BinaryRun.run(run, environment: h.env.values, directory: h.reportDirectory)
            #expect(fixed.status == 0, "\(fixed.operatorLines)")
            #expect(try await h.user("c-1")?.currentTier == 1)
        }
    }
}
