import Foundation
import SubreconCore

/// The `verifyReceipt` response body (apple.md §4). Every value inside the arrays is a string on the wire;
/// `ReceiptField` also accepts numbers and booleans so a lenient answer still decodes.
struct VerifyReceiptResponse: Decodable {
    var status: Int
    var environment: String?
    var isRetryable: Bool?
    var latestReceiptInfo: [[String: ReceiptField]]?
    var pendingRenewalInfo: [[String: ReceiptField]]?
    var receipt: Receipt?

    /// The decoded receipt itself: whose app it is.
    struct Receipt: Decodable {
        var bundleID: String?
        enum CodingKeys: String, CodingKey { case bundleID = "bundle_id" }
    }

    /// Decodes a body after `SourceText.sanitizedJSON` (invalid UTF-8 repaired, NUL made visible); nil when it is
    /// not a `verifyReceipt` answer.
    static func decode(body: Data) -> VerifyReceiptResponse? {
        try? JSONDecoder().decode(VerifyReceiptResponse.self, from: SourceText.sanitizedJSON(body))
    }

    enum CodingKeys: String, CodingKey {
        case status, environment, receipt
        case isRetryable = "is_retryable"
        case latestReceiptInfo = "latest_receipt_info"
        case pendingRenewalInfo = "pending_renewal_info"
    }
}

/// One scalar of a receipt dictionary, kept as text.
struct ReceiptField: Decodable {
    var text: String

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let string = try? container.decode(String.self) {
            text = string
        } else if let number = try? container.decode(Int64.self) {
            text = String(number)
        } else if let flag = try? container.decode(Bool.self) {
            text = flag ? "true" : "false"
        } else if container.decodeNil() {
            text = ""
        } else {
            // Nested objects (e.g. price consent details) are not needed; keep them out of the way.
            text = ""
        }
    }
}

/// What a `verifyReceipt` answer revealed about one user.
public struct ReceiptAnswer: Sendable, Hashable {
    /// The environment that answered (`isSandbox` of every fact follows it).
    public var environment: StoreEnvironmentName
    /// The receipt status: 0, or 21006 (valid but expired, iOS 6 style).
    public var status: Int
    /// The original transaction id of the subscription the answer is about (the product's, else the latest); nil
    /// when the receipt holds no subscription transaction.
    public var originalTransactionID: String?
    /// One fact per subscription (original transaction id) in the receipt: its latest, non-upgraded transaction.
    public var purchases: [PurchaseFact]
    /// Original transaction ids whose latest transaction is in a free trial or introductory offer period.
    public var trialOriginalTransactionIDs: Set<String>
}

/// Turns `latest_receipt_info` and `pending_renewal_info` into facts (origin and store `.appStore`).
enum ReceiptMapping {
    static func answer(_ response: VerifyReceiptResponse, environment: StoreEnvironmentName, productID: String?) -> ReceiptAnswer {
        let entries = (response.latestReceiptInfo ?? []).map { $0.mapValues(\.text) }
        let renewals = (response.pendingRenewalInfo ?? []).map { $0.mapValues(\.text) }
        // The latest transaction of each subscription; upgraded-away transactions never count.
        var latest: [String: [String: String]] = [:]
        for entry in entries where entry["is_upgraded"] != "true" {
            guard let original = entry["original_transaction_id"], !original.isEmpty else { continue }
            if let current = latest[original], key(current) >= key(entry) { continue }
            latest[original] = entry
        }
        let ordered = latest.values.sorted { key($0) > key($1) }
        let forProduct = productID.flatMap { product in
            entries.filter { $0["product_id"] == product }.max { key($0) < key($1) }?["original_transaction_id"]
        }
        let revealed = forProduct ?? ordered.first?["original_transaction_id"]
        var purchases: [PurchaseFact] = []
        var trials = Set<String>()
        for entry in ordered {
            let original = entry["original_transaction_id"] ?? ""
            let renewal = renewals.first { $0["original_transaction_id"] == original }
            purchases.append(fact(entry, renewal: renewal, environment: environment))
            if entry["is_trial_period"] == "true" || entry["is_in_intro_offer_period"] == "true" { trials.insert(original) }
        }
        return ReceiptAnswer(
            environment: environment, status: response.status, originalTransactionID: revealed, purchases: purchases,
            trialOriginalTransactionIDs: trials)
    }

    static func fact(_ entry: [String: String], renewal: [String: String]?, environment: StoreEnvironmentName) -> PurchaseFact {
        let expires = date(entry["expires_date_ms"])
        let billingRetry = renewal?["is_in_billing_retry_period"] == "1" || renewal?["is_in_billing_retry_period"] == "true"
        let autoRenew = renewal?["auto_renew_status"].flatMap { value -> Bool? in
            switch value {
            case "1", "true": true
            case "0", "false": false
            default: nil
            }
        }
        // A receipt entry does not state its type: with an expiry it is a subscription; without one it could be a
        // non-consumable or a non-renewing purchase, so its kind stays unstated (never lifetime).
        return PurchaseFact(
            origin: .appStore,
            productID: entry["product_id"] ?? renewal?["product_id"] ?? "",
            store: .appStore,
            kind: expires == nil ? .unstated : .subscription,
            isSandbox: environment == .sandbox,
            purchaseDate: date(entry["purchase_date_ms"]),
            expiresDate: expires,
            gracePeriodExpiresDate: date(renewal?["grace_period_expires_date_ms"]),
            refundedAt: date(entry["cancellation_date_ms"]),
            billingIssueDetectedAt: billingRetry ? expires : nil,
            autoRenew: expires == nil ? nil : autoRenew,
            originalTransactionID: entry["original_transaction_id"],
            storeTransactionID: entry["transaction_id"],
            line: PurchaseLine.of(store: .appStore, ids: [entry["original_transaction_id"], entry["transaction_id"]]),
            // A receipt entry names the buyer only as `app_account_token`, a UUID the app set at purchase.
            buyer: .stated(entry["app_account_token"].flatMap { UUID(uuidString: $0)?.uuidString }, store: .appStore))
    }

    /// Latest first: by expiry, then purchase date (ms since the epoch).
    private static func key(_ entry: [String: String]) -> (Int64, Int64) {
        (Int64(entry["expires_date_ms"] ?? "") ?? Int64.min, Int64(entry["purchase_date_ms"] ?? "") ?? Int64.min)
    }

    /// A `*_date_ms` string as an instant; nil when absent, not plain digits, or outside 1970...2200.
    static func date(_ milliseconds: String?) -> Date? {
        guard let milliseconds else { return nil }
        return StrictDate.epochMilliseconds(text: milliseconds)
    }

    /// The date fields read from a receipt answer.
    static let dateFields = ["purchase_date_ms", "expires_date_ms", "cancellation_date_ms", "grace_period_expires_date_ms"]

    /// The first date field of `response` that is present but unusable (CONTRACT "Hostile answers and bounded work": the answer is then not evidence),
    /// nil when every stated date is readable.
    static func unusableDate(_ response: VerifyReceiptResponse) -> String? {
        for entry in (response.latestReceiptInfo ?? []) + (response.pendingRenewalInfo ?? []) {
            for field in dateFields {
                // Absent, null (read as "") or an object: not stated; anything else must be a date.
                guard let text = entry[field]?.text, !text.isEmpty else { continue }
                if date(text) == nil { return field }
            }
        }
        return nil
    }
}
