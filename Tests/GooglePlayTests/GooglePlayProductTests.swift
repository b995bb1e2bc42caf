import Foundation
import GooglePlay
import PropertyBased
import SubreconCore
import Testing

/// (CONTRACT "Sources and the decision", "Hostile answers and bounded work") A Google Play one-time product (`purchases.products.get`, `ProductPurchase`) is a
/// non-expiring purchase: purchased entitles without an end, canceled is refunded, pending never entitles, a test
/// purchase is a sandbox one; every field is read strictly and a value outside Google's documented range fails the
/// user closed.
@Suite("Google Play one-time products: decoding and mapping")
struct GooglePlayProductTests {
    static let asOf = Date(timeIntervalSince1970: 1_780_282_800)  // 2026-06-01T03:00:00Z
    static let context = DecisionContext(
        asOf: asOf, catalog: ProductCatalog([.init(productID: "pro.lifetime", tier: 2, entitlement: "pro")]))

    static func fact(_ json: String) throws -> StoreFact {
        try GooglePlayProductMapping.storeFact(try GoogleJSON.product(Data(json.utf8)), productID: "pro.lifetime", token: "tok-1")
    }

    struct Case: Sendable, CustomTestStringConvertible {
        let json: String
        /// The tier at T; nil: no fact (unknown).
        let tier: Int?
        let status: SubscriptionStatus?
        let sandbox: Bool
        var testDescription: String { json }
    }

    static let cases: [Case] = [
        Case(
            json: #"{"purchaseState":0,"purchaseTimeMillis":"1770000000000","orderId":"GPA.1"}"#, tier: 2, status: .active, sandbox: false),
        Case(json: #"{"purchaseState":0,"purchaseTimeMillis":1770000000000,"purchaseType":1}"#, tier: 2, status: .active, sandbox: false),
        Case(json: #"{"purchaseState":1,"purchaseTimeMillis":"1770000000000"}"#, tier: 0, status: .refunded, sandbox: false),
        Case(json: #"{"purchaseState":2,"purchaseTimeMillis":"1770000000000"}"#, tier: 0, status: .expired, sandbox: false),
        Case(json: #"{"purchaseState":0,"purchaseTimeMillis":"1770000000000","purchaseType":0}"#, tier: 0, status: nil, sandbox: true),
        Case(json: #"{"purchaseState":0,"consumptionState":1}"#, tier: nil, status: nil, sandbox: false),
    ]

    @Test("purchased entitles without an end; canceled is refunded; pending never entitles; a test purchase is sandbox", arguments: cases)
    func states(_ c: Case) throws {
        let fact = try Self.fact(c.json)
        #expect(fact.purchase.isSandbox == c.sandbox && fact.purchase.store == .playStore && fact.purchase.origin == .googlePlay)
        #expect(fact.purchase.expiresDate == nil)
        var facts = SourceFacts(revenueCatKnowsSubscriber: false, revenueCatPurchases: [], stores: [fact])
        facts.noteAsked(.googlePlay)
        let row = UserRow(
            id: "u", currentTier: 0, status: "expired", endDate: Self.asOf.addingTimeInterval(-86_400), source: "google_iap",
            productID: "pro.lifetime", autoRenew: false, identifiers: [.googlePlay: "tok-1"])
        let verdict = Decision.decide(row: row, facts: facts, context: Self.context)
        if c.sandbox {
            #expect(!verdict.changesRow && verdict.drift.contains(.sandboxIgnored), "\(verdict.action) \(verdict.drift)")
            return
        }
        guard let tier = c.tier else {
            #expect(!verdict.changesRow, "a consumed product is no lifetime purchase: \(verdict.action)")
            return
        }
        let truth = try #require(verdict.truth)
        #expect(truth.tier == tier && truth.status == c.status, "\(truth)")
        if tier > 0 { #expect(truth.endDate == nil && verdict.changesRow) }
    }

    @Test(
        "wrong types, out-of-range millis, missing or undocumented states, another product: never a fact",
        arguments: [
            #"{"purchaseTimeMillis":"1770000000000"}"#, #"{"purchaseState":3}"#, #"{"purchaseState":-1}"#,
            #"{"purchaseState":"zero"}"#, #"{"purchaseState":0.5}"#, #"{"purchaseState":true}"#,
            #"{"purchaseState":0,"purchaseTimeMillis":"-1"}"#, #"{"purchaseState":0,"purchaseTimeMillis":"99999999999999999"}"#,
            #"{"purchaseState":0,"purchaseTimeMillis":"1770000000000x"}"#, #"{"purchaseState":0,"purchaseTimeMillis":" 1770000000000"}"#,
            #"{"purchaseState":0,"purchaseTimeMillis":"1.77e12"}"#, #"{"purchaseState":0,"purchaseTimeMillis":{"v":1}}"#,
            #"{"purchaseState":0,"purchaseTimeMillis":"99999999999999999999999"}"#, #"{"purchaseState":0,"purchaseType":3}"#,
            #"{"purchaseState":0,"consumptionState":2}"#, #"{"purchaseState":0,"acknowledgementState":7}"#,
            #"{"purchaseState":0,"quantity":0}"#, #"{"purchaseState":0,"productId":"other.product"}"#,
            #"{"purchaseState":4294967296}"#, #"{"purchaseState":0,"orderId":17}"#, #"[]"#, #"{"purchaseState":0"#,
        ])
    func hostile(json: String) {
        #expect(throws: (any Error).self, "\(json)") { try Self.fact(json) }
    }

    @Test("purchaseTimeMillis as a string or a number: read whole, in 1970...2200 only")
    func millisProperty() async {
        await propertyCheck(count: 1_000, input: Gen.int64(in: -10_000_000_000_000...10_000_000_000_000), Gen.bool) { millis, quoted in
            let value = quoted ? "\"\(millis)\"" : "\(millis)"
            let fact = try? Self.fact(#"{"purchaseState":0,"purchaseTimeMillis":\#(value)}"#)
            if millis >= 0 && millis <= StrictDate.latestMilliseconds {
                #expect(fact?.purchase.purchaseDate == Date(timeIntervalSince1970: Double(millis) / 1000), "\(value)")
            } else {
                #expect(fact == nil, "\(value) kept")
            }
        }
    }

    @Test("the decoder never traps on arbitrary bytes, and keeps no NUL in text")
    func decoderProperty() async {
        await propertyCheck(count: 1_000, input: Gen.uint8().array(of: 0...64)) { bytes in
            let data = Data(#"{"purchaseState":0,"orderId":""#.utf8) + Data(bytes) + Data(#""}"#.utf8)
            if let purchase = try? GoogleJSON.product(data) {
                #expect(purchase.orderId?.unicodeScalars.contains("\u{0}") != true)
            }
        }
    }
}
