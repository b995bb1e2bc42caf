import Foundation
import PropertyBased
import SubreconCore
import SubreconPorts
import Testing

@testable import SubreconDatabase

/// The audit JSON is written field by field (`JSONText`) instead of through `JSONSerialization` with sorted keys.
/// Oracle: the former writer, kept here; both texts must parse to the same object, for any strings.
@Suite("Audit JSON: properties over generated rows")
struct AuditJSONPropertyTests {
    static let pool: [Character] = [
        "a", "Z", "0", " ", "\"", "\\", "/", "\u{0}", "\n", "\r", "\t", "\u{1}", "\u{1f}", "\u{7f}", "é", "€", "😀", "{", ",",
    ]
    static let text = Gen.element(of: pool).array(of: 0...12).map { String($0.compactMap { $0 }) }
    static let instant = Gen.int64(in: 0...7_258_118_399_999).map { Date(timeIntervalSince1970: Double($0) / 1000) }

    @Test("the before row's JSON parses to what JSONSerialization wrote, for any strings and instants")
    func rowsMatch() async throws {
        await propertyCheck(
            count: 1_000, input: Self.text, Self.text.optional, Self.instant.optional, Gen.bool.optional, Gen.int64(in: -1...Int64.max)
        ) { text, optionalText, date, flag, micros in
            let row = UserRow(
                id: text, currentTier: Int(micros % 7), status: text, endDate: date, graceEndsAt: date, source: optionalText,
                productID: optionalText, originalTransactionID: text, autoRenew: flag, updatedAtMicros: micros)
            #expect(Self.parsed(AuditJSON.row(row)) == Self.parsed(Self.reference(row)), "\(row)")
        }
    }

    @Test("the after JSON and the intent payload parse to what JSONSerialization wrote")
    func entitlementsAndPayloadsMatch() async throws {
        await propertyCheck(count: 1_000, input: Self.text, Self.text.optional, Self.instant.optional, Gen.bool.optional) {
            text, optionalText, date, flag in
            let truth = Entitlement(
                tier: 2, status: .billingIssue, endDate: date, graceEndsAt: nil, source: text, productID: optionalText,
                originalTransactionID: optionalText, autoRenew: flag)
            #expect(Self.parsed(AuditJSON.entitlement(truth)) == Self.parsed(Self.reference(truth)))
            for kind in PushIntentKind.allCases {
                let intent = PushIntent(userID: text, kind: kind, periodEnd: date, productID: optionalText, tier: 1)
                #expect(Self.parsed(AuditJSON.payload(intent, runID: text)) == Self.parsed(Self.reference(intent, runID: text)))
            }
        }
    }

    @Test("drift is a JSON array of the kinds' names")
    func driftArray() throws {
        #expect(AuditJSON.drift([]) == "[]")
        #expect(AuditJSON.drift([.missedExpiration, .inSync]) == #"["missed_expiration","in_sync"]"#)
    }

    @Test("NUL is written as visible text, as jsonb needs, the way the shared jsonb writer does")
    func nulVisible() {
        let row = UserRow(id: "u", currentTier: 0, status: "a\u{0}b")
        #expect(AuditJSON.row(row).contains(#""a\\u0000b""#))
        #expect(AuditJSON.row(row) == Self.reference(row))
    }

    static func parsed(_ text: String) -> NSDictionary? {
        (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? NSDictionary
    }

    // The former writer (JSONSerialization, sorted keys), as the oracle.
    static func reference(_ row: UserRow) -> String {
        var object = fields(
            tier: row.currentTier, status: row.statusText, endDate: row.endDate, graceEndsAt: row.graceEndsAt, source: row.source,
            productID: row.productID, originalTransactionID: row.originalTransactionID, autoRenew: row.autoRenew)
        object["updated_at_micros"] = NSNumber(value: row.updatedAtMicros)
        return text(object)
    }

    static func reference(_ truth: Entitlement) -> String {
        text(
            fields(
                tier: truth.tier, status: truth.status.rawValue, endDate: truth.endDate, graceEndsAt: truth.graceEndsAt,
                source: truth.source, productID: truth.productID, originalTransactionID: truth.originalTransactionID,
                autoRenew: truth.autoRenew))
    }

    static func reference(_ intent: PushIntent, runID: String) -> String {
        text([
            "user_id": intent.userID, "kind": intent.kind.rawValue, "action": intent.kind.appAction ?? NSNull(),
            "product_id": intent.productID ?? NSNull(), "tier": intent.tier,
            "period_end": intent.periodEnd.map(ISO8601.string) ?? NSNull(), "run_id": runID,
        ])
    }

    private static func fields(
        tier: Int, status: String, endDate: Date?, graceEndsAt: Date?, source: String?, productID: String?,
        originalTransactionID: String?, autoRenew: Bool?
    ) -> [String: Any] {
        [
            "current_tier": tier, "subscription_status": status,
            "subscription_end_date": endDate.map(ISO8601.string) ?? NSNull(),
            "grace_period_ends_at": graceEndsAt.map(ISO8601.string) ?? NSNull(),
            "subscription_source": source ?? NSNull(), "iap_product_id": productID ?? NSNull(),
            "iap_original_transaction_id": originalTransactionID ?? NSNull(),
            "auto_renew": autoRenew.map { NSNumber(value: $0) } ?? NSNull(),
        ]
    }

    private static func text(_ object: [String: Any]) -> String {
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data()
        return SourceText.jsonbText(data)
    }
}
