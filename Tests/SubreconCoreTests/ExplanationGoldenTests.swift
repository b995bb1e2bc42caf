import Foundation
import SubreconCore
import SubreconTestKit
import Testing

/// `subrecon explain` (CONTRACT "Commands"): the text and JSON forms against golden files (`Golden/`). The test only compares;
/// a missing golden file fails. A deliberate change of the output is recorded explicitly with
/// `UPDATE_GOLDEN=1 scripts/test --filter ExplanationGoldenTests` (or `SUBRECON_UPDATE_GOLDEN=1`) and reviewed in the diff.
@Suite("explain: golden text and JSON")
struct ExplanationGoldenTests {
    static let asOf = ISO8601.date("2026-06-01T03:00:00Z")!
    static func day(_ n: Double) -> Date { asOf.addingTimeInterval(n * 86_400) }
    static let catalog = ProductCatalog([
        .init(productID: "premium_monthly", tier: 1, entitlement: "premium"),
        .init(productID: "pro_annual", tier: 2, entitlement: "pro"),
    ])

    static func golden(_ name: String) -> URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Golden/\(name)")
    }

    /// Golden files are written only on explicit request, never by a plain test run.
    static var updating: Bool {
        let environment = ProcessInfo.processInfo.environment
        return environment["UPDATE_GOLDEN"] == "1" || environment["SUBRECON_UPDATE_GOLDEN"] == "1"
    }

    func check(_ explanation: Explanation, _ name: String) throws {
        let text = Data((explanation.text.joined(separator: "\n") + "\n").utf8)
        let json = try explanation.jsonData() + Data("\n".utf8)
        for (data, file) in [(text, "\(name).txt"), (json, "\(name).json")] {
            let url = Self.golden(file)
            if Self.updating { try data.write(to: url) }
            let expected = try #require(
                FileManager.default.contents(atPath: url.path), "golden file \(file) is missing (UPDATE_GOLDEN=1 records it)")
            #expect(
                String(decoding: data, as: UTF8.self) == String(decoding: expected, as: UTF8.self),
                "\(file) differs from the golden file (UPDATE_GOLDEN=1 records a deliberate change)")
        }
    }

    @Test("Apple overrides a lagging RevenueCat: evidence, verdict and the rule behind each drift kind")
    func appleOverrides() throws {
        let row = UserRow(
            id: "user-42", currentTier: 1, status: "active", endDate: Self.day(-3), source: "apple_iap",
            productID: "premium_monthly", originalTransactionID: "1000", autoRenew: true, updatedAtMicros: 1)
        let revenueCat = PurchaseFact(
            productID: "premium_monthly", store: .appStore, isSandbox: false, purchaseDate: Self.day(-33),
            expiresDate: Self.day(-3), autoRenew: true, originalTransactionID: "1000", storeTransactionID: "1003",
            price: Money(amount: Decimal(string: "9.99")!, currency: "USD"), line: nil, buyer: .unstated)
        let apple = PurchaseFact(
            origin: .appStore, productID: "premium_monthly", store: .appStore, isSandbox: false, purchaseDate: Self.day(-3),
            expiresDate: Self.day(27), autoRenew: true, storeState: .active, originalTransactionID: "1000",
            storeTransactionID: "1004", price: Money(amount: Decimal(string: "9.99")!, currency: "USD"), line: nil, buyer: .unstated)
        var facts = SourceFacts(
            revenueCatKnowsSubscriber: true, revenueCatPurchases: [revenueCat],
            revenueCatEntitlements: [EntitlementFact(identifier: "premium", productID: "premium_monthly", expires: .at(Self.day(-3)))],
            stores: [StoreFact(lookupID: "1000", purchase: apple)])
        facts.asked = [.revenueCat, .appStore]
        let context = DecisionContext(asOf: Self.asOf, catalog: Self.catalog)
        let verdict = Decision.decide(row: row, facts: facts, context: context)
        try check(
            Explanation(row: row, facts: facts, context: context, verdict: verdict, columns: IdentifierColumn.testColumns),
            "explain-apple-override")
    }

    @Test("a Stripe error and Google absence leave the row untouched, and say why")
    func skipped() throws {
        let row = UserRow(
            id: "user-7", currentTier: 2, status: "active", endDate: Self.day(200), source: "stripe", productID: "pro_annual",
            updatedAtMicros: 1, identifiers: [.stripe: "cus_123", .googlePlay: "token-abc"].compactMapValues { $0 })
        var facts = SourceFacts(revenueCatKnowsSubscriber: false, revenueCatPurchases: [])
        facts.asked = [.stripe]
        facts.errors = [SourceError(origin: .stripe, kind: .fetch, message: "Stripe: HTTP 503 after 4 attempts")]
        let context = DecisionContext(asOf: Self.asOf, catalog: Self.catalog)
        let verdict = Decision.decide(row: row, facts: facts, context: context)
        #expect(verdict.action == Action.skipped)
        try check(
            Explanation(row: row, facts: facts, context: context, verdict: verdict, columns: IdentifierColumn.testColumns),
            "explain-stripe-error")
    }
}
