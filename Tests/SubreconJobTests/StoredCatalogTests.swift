import Foundation
import Logging
import SubreconCore
import SubreconPorts
import SubreconTestKit
import Testing

@testable import SubreconJob

/// Rows already in `product_tiers` are checked at load as `products import` checks a file (docs/CONTRACT.md,
/// "Commands"): a bad one refuses the run (78, naming the product and the fix) before any store is asked.
@Suite("The stored product catalog is checked at load", .timeLimit(.minutes(1)))
struct StoredCatalogTests {
    typealias Entry = ProductCatalog.Entry

    @Test(
        "a row import would refuse is named: a tier outside 0…1000, a BOM or control character in a product id or entitlement",
        arguments: [
            (Entry(productID: "premium_monthly", tier: -1), "product \"premium_monthly\" has tier -1, not an integer 0…1000"),
            (Entry(productID: "premium_monthly", tier: 1001), "has tier 1001"),
            (
                Entry(productID: "\u{FEFF}premium_monthly", tier: 1),
                "product id \"\\u{FEFF}premium_monthly\" holds the control character U+FEFF"
            ),
            (Entry(productID: "premium\u{1B}[2J", tier: 1), "holds the control character U+001B"),
            (Entry(productID: "", tier: 1), "a product id is empty"),
            (Entry(productID: "premium_monthly", tier: 1, entitlement: "pre\u{0}mium"), "entitlement holds the control character U+0000"),
        ])
    func problems(entry: ProductCatalog.Entry, expected: String) throws {
        let catalog = ProductCatalog([entry, .init(productID: "pro_monthly", tier: 2, entitlement: "pro")])
        let problems = StoredCatalog.problems(catalog)
        #expect(problems.count == 1 && problems[0].contains(expected), "\(problems)")
        #expect(throws: CommandFailure.self) { try StoredCatalog.checked(catalog) }
        do {
            _ = try StoredCatalog.checked(catalog)
        } catch let failure as CommandFailure {
            #expect(failure.status == .config)
            #expect(failure.description.contains(expected) && failure.description.contains("products import --replace"), "\(failure)")
        }
    }

    @Test("a catalog import accepts passes unchanged (tier 0 and 1000 included)")
    func good() throws {
        let catalog = ProductCatalog([
            .init(productID: "free", tier: 0), .init(productID: "max", tier: 1000, entitlement: "max"), .init(productID: "é", tier: 1),
        ])
        #expect(StoredCatalog.problems(catalog).isEmpty)
        #expect(try StoredCatalog.checked(catalog) == catalog)
    }

    @Test("a run over a tier of -1 left by an older importer: 78 naming the product, no store asked, nothing recorded, nobody downgraded")
    func runRefused() async throws {
        try await JobFixture.with(["u-1": .renewed, "u-2": .lapsed]) { world in
            for dryRun in [false, true] {
                let bad = ProductCatalog([.init(productID: "premium_monthly", tier: -1, entitlement: "premium")])
                let job = NothingToResumeTests.job(world, catalog: InMemoryDatabase(catalog: bad))
                let failure = await NothingToResumeTests.failure {
                    try await job.run(world.options { $0.dryRun = dryRun }, runID: "bad-\(dryRun)", startedAt: world.clock.now())
                }
                #expect(failure?.status == .config, "\(failure?.description ?? "no failure")")
                #expect(failure?.description.contains("\"premium_monthly\" has tier -1") == true)
                #expect(world.database.runStatus("bad-\(dryRun)") == nil, "nothing recorded")
            }
            #expect(world.source.askedCount.isEmpty, "no store asked")
            #expect(world.database.audits.isEmpty && world.database.intents.isEmpty)
            #expect(world.database.users.allSatisfy { $0.currentTier == 1 }, "nobody downgraded")
        }
    }
}
