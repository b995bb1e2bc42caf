import Foundation
import SubreconCommand
import SubreconCore
import SubreconReports
import Testing

/// `subrecon products check` (docs/CONTRACT.md, "Commands") read against a run folder written here: the products
/// the latest run saw that `product_tiers` does not map are warnings, and no run yet is one line, never a failure.
@Suite("products check: the latest run's products against product_tiers")
struct ProductCheckTests {
    static let catalog = ProductCatalog([.init(productID: "premium", tier: 1), .init(productID: "plus", tier: 2)])

    /// A report folder whose `latest/drift.json` holds `json`, removed after `body`.
    func withReports(latest json: String?, _ body: (URL) throws -> Void) throws {
        let reports = FileManager.default.temporaryDirectory.appendingPathComponent("subrecon-check-\(UUID().uuidString)")
        let latest = reports.appendingPathComponent("latest")
        try FileManager.default.createDirectory(at: latest, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: reports) }
        if let json { try Data(json.utf8).write(to: latest.appendingPathComponent("drift.json")) }
        try body(reports)
    }

    static func row(_ user: String, product: String?, drift: String, error: String? = nil, missing: [String] = []) -> String {
        let product = product.map { "\"\($0)\"" } ?? "null"
        let error = error.map { "\"\($0)\"" } ?? "null"
        let list = missing.isEmpty ? "" : ", \"missing_products\": [" + missing.map { "\"\($0)\"" }.joined(separator: ", ") + "]"
        return """
            {"run_id": "r1", "user_id": "\(user)", "product_id": \(product), "db_tier": 1, "db_status": "active",
             "action": "none", "drift": "\(drift)", "applied": false, "push_intent": "", "error": \(error)\(list)}
            """
    }

    @Test("a product no row of product_tiers maps is named with its users, and those skipped as unknown_product")
    func missingProducts() throws {
        let rows = [
            Self.row("u1", product: "premium", drift: "in_sync"),
            Self.row("u2", product: "mystery", drift: "in_sync"),
            Self.row(
                "u3", product: nil, drift: "unknown_product",
                error: "entitled product(s) missing from product_tiers: mystery, other", missing: ["mystery", "other"]),
        ]
        try withReports(latest: "[" + rows.joined(separator: ",\n") + "]") { reports in
            let check = try ProductCheck.check(reportDirectory: reports, catalog: Self.catalog)
            #expect(check.runID == "r1")
            #expect(check.productsSeen == 3)
            #expect(check.missing.map { "\($0.productID) \($0.users) \($0.skippedUsers)" } == ["mystery 2 1", "other 1 1"])
            #expect(
                check.lines == [
                    "warning: product mystery seen in run r1 (2 users, 1 skipped as unknown_product) is missing from product_tiers",
                    "warning: product other seen in run r1 (1 user, 1 skipped as unknown_product) is missing from product_tiers",
                    "2 of 3 products seen in run r1 are missing from product_tiers; add them with subrecon products import",
                ])
        }
    }

    @Test("a product id holding commas is named exactly: the report's list is read, never its error sentence")
    func commaInProductID() throws {
        let odd = "bundle, annual,2026"
        let purchase = PurchaseFact(
            productID: odd, store: .appStore, isSandbox: false, purchaseDate: Date(timeIntervalSince1970: 1_790_000_000 - 86_400),
            expiresDate: Date(timeIntervalSince1970: 1_790_000_000 + 29 * 86_400), gracePeriodExpiresDate: nil,
            billingIssueDetectedAt: nil, autoRenew: true, originalTransactionID: "t1", price: nil, line: nil, buyer: .unstated)
        let verdict = Decision.decide(
            row: UserRow(id: "u1", currentTier: 0, status: "expired"),
            facts: SourceFacts(revenueCatKnowsSubscriber: true, revenueCatPurchases: [purchase]),
            context: DecisionContext(asOf: Date(timeIntervalSince1970: 1_790_000_000), environment: .production, catalog: Self.catalog))
        #expect(verdict.drift.contains(.unknownProduct) && verdict.missingProducts == [odd])
        let json = try JSONEncoder().encode([ReportRow(runID: "r1", verdict: verdict, applied: false)])
        try withReports(latest: String(decoding: json, as: UTF8.self)) { reports in
            let check = try ProductCheck.check(reportDirectory: reports, catalog: Self.catalog)
            #expect(check.missing.map(\.productID) == [odd], "\(check.lines)")
            #expect(check.missing.first?.skippedUsers == 1)
        }
    }

    @Test("every product mapped is one ok line")
    func allMapped() throws {
        try withReports(latest: "[" + Self.row("u1", product: "plus", drift: "in_sync") + "]") { reports in
            let check = try ProductCheck.check(reportDirectory: reports, catalog: Self.catalog)
            #expect(check.missing.isEmpty)
            #expect(check.lines == ["ok: all 1 products seen in run r1 are in product_tiers"])
        }
    }

    @Test("no run yet, or a drift.json that is not a drift report, is one line and nothing compared")
    func nothingToCompare() throws {
        try withReports(latest: nil) { reports in
            let check = try ProductCheck.check(reportDirectory: reports, catalog: Self.catalog)
            #expect(check.note?.hasPrefix("no run yet under \(reports.path)") == true, "\(check.lines)")
            #expect(check.lines.count == 1 && check.missing.isEmpty)
        }
        try withReports(latest: "{\"not\": \"a report\"}") { reports in
            let check = try ProductCheck.check(reportDirectory: reports, catalog: Self.catalog)
            #expect(check.note?.hasPrefix("warning: ") == true && check.note?.hasSuffix("is not a drift report: nothing checked") == true)
            #expect(check.lines.count == 1 && check.missing.isEmpty)
        }
    }
}
