import Foundation
import PostgresNIO
import SubreconApp
import SubreconCore
import SubreconDatabase
import SubreconJob
import SubreconPorts
import Testing

/// `subrecon products import` and `list` (docs/CONTRACT.md, "Commands"), through the binary: a refused file writes
/// nothing, and what `list` prints imports back to the same table. How strictly the file is parsed is held by
/// SubreconCommandTests' `InputFilesTests`.
@Suite(
    "products import / list / check: strict and exact", .serialized, .enabled(if: Harness.isEnabled, Harness.skip), .timeLimit(.minutes(5)))
struct OperatorInputTests {
    func table(_ h: Harness) async throws -> [ProductCatalog.Entry] {
        var entries: [ProductCatalog.Entry] = []
        for try await (product, tier, entitlement) in try await h.client.query(
            "select product_id, tier, entitlement from product_tiers order by product_id"
        ).decode((String, Int, String?).self) { entries.append(.init(productID: product, tier: tier, entitlement: entitlement)) }
        return entries
    }

    @Test("the binary: a bad line anywhere writes nothing and exits 64 naming it (a tier too large for an integer too)")
    func importAllOrNothing() async throws {
        try await Harness.with { h in
            let before = try await table(h)
            let files: [(String, String, Int)] = [
                ("big.csv", "new_a,1\nnew_b,2147483648\n", 2),
                ("neg.json", "[\n{\"product_id\": \"new_a\", \"tier\": 1},\n{\"product_id\": \"new_b\", \"tier\": -1}\n]", 3),
                ("dup.csv", "product_id,tier\nnew_a,1\npremium_monthly,0\nnew_a,2\n", 4),
            ]
            for (name, text, line) in files {
                let file = h.reportDirectory.appendingPathComponent(name)
                try Data(text.utf8).write(to: file)
                let run = try await BinaryRun.run(
                    ["products", "import", file.path], environment: h.env.values, directory: h.reportDirectory)
                #expect(run.status == 64, "\(name): \(run.operatorLines)")
                #expect(
                    run.operatorLines.count == 1 && run.operatorLines.first?.contains("\(name):\(line):") == true,
                    "\(name): \(run.operatorLines)")
                #expect(try await table(h) == before, "\(name): nothing written")
            }
        }
    }

    @Test("the binary: products list prints RFC 4180 CSV that imports back to the same table")
    func listRoundTrip() async throws {
        try await Harness.with { h in
            let hostile: [ProductCatalog.Entry] = [
                .init(productID: "com.app,comma", tier: 1, entitlement: "pro, plus"),
                .init(productID: "with \"quotes\"", tier: 2, entitlement: "\"q\""),
                .init(productID: " leading and trailing ", tier: 0, entitlement: " e "),
                .init(productID: "ünïcødé·产品", tier: 1000, entitlement: "ü"),
                .init(productID: "product_id", tier: 3),
                .init(productID: "#hash", tier: 4, entitlement: ""),
                .init(productID: "[bracket", tier: 5),
                .init(productID: "=formula", tier: 6, entitlement: "-minus"),
            ]
            try await h.db.catalog.upsertProducts(hostile)
            let before = try await table(h)
            let list = try await BinaryRun.run(["products", "list"], environment: h.env.values, directory: h.reportDirectory)
            #expect(list.status == 0)
            #expect(list.stdoutText.hasPrefix("product_id,tier,entitlement\r\n"), "RFC 4180: CRLF lines")
            let file = h.reportDirectory.appendingPathComponent("listed.csv")
            try list.stdout.write(to: file)
            try await h.client.query("delete from product_tiers")
            let imported = try await BinaryRun.run(
                ["products", "import", file.path], environment: h.env.values, directory: h.reportDirectory)
            #expect(imported.status == 0, "\(imported.operatorLines)")
            #expect(try await table(h) == before)
        }
    }

    @Test("the binary: products check on a fresh install (no run yet) says so and exits 0, as documented")
    func checkFreshInstall() async throws {
        try await Harness.with { h in
            let empty = h.reportDirectory.appendingPathComponent("fresh")
            try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
            let check = try await BinaryRun.run(
                ["products", "check", "--report-dir", empty.path], environment: h.env.values, directory: h.reportDirectory)
            #expect(check.status == 0, "\(check.operatorLines)")
            #expect(check.stdoutText.contains("no run"), "\(check.stdoutText)")
        }
    }
}
