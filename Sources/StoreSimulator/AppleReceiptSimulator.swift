import Foundation
import SubreconCore

/// One legacy receipt the simulator knows: what `verifyReceipt` answers for its `receipt-data`.
public struct AppleReceiptScenario: Sendable, Hashable {
    /// One `latest_receipt_info` entry (every value is sent as a string, as Apple does).
    public struct Transaction: Sendable, Hashable {
        public var originalTransactionID: String
        public var transactionID: String
        public var productID: String
        public var purchaseDate: Date
        public var expiresDate: Date?
        public var cancellationDate: Date?
        public var isTrialPeriod: Bool
        public var isUpgraded: Bool

        public init(
            originalTransactionID: String, transactionID: String? = nil, productID: String, purchaseDate: Date,
            expiresDate: Date?, cancellationDate: Date? = nil, isTrialPeriod: Bool = false, isUpgraded: Bool = false
        ) {
            self.originalTransactionID = originalTransactionID
            self.transactionID = transactionID ?? originalTransactionID
            self.productID = productID
            self.purchaseDate = purchaseDate
            self.expiresDate = expiresDate
            self.cancellationDate = cancellationDate
            self.isTrialPeriod = isTrialPeriod
            self.isUpgraded = isUpgraded
        }
    }

    /// One `pending_renewal_info` entry.
    public struct Renewal: Sendable, Hashable {
        public var originalTransactionID: String
        public var productID: String
        public var autoRenew: Bool
        public var isInBillingRetryPeriod: Bool
        public var gracePeriodExpiresDate: Date?
        public var expirationIntent: Int?

        public init(
            originalTransactionID: String, productID: String, autoRenew: Bool = true, isInBillingRetryPeriod: Bool = false,
            gracePeriodExpiresDate: Date? = nil, expirationIntent: Int? = nil
        ) {
            self.originalTransactionID = originalTransactionID
            self.productID = productID
            self.autoRenew = autoRenew
            self.isInBillingRetryPeriod = isInBillingRetryPeriod
            self.gracePeriodExpiresDate = gracePeriodExpiresDate
            self.expirationIntent = expirationIntent
        }
    }

    public var receiptData: String
    public var environment: StoreEnvironment
    public var transactions: [Transaction]
    public var renewals: [Renewal]
    /// The receipt's `bundle_id`; nil: the simulator's own.
    public var bundleID: String?

    public init(
        receiptData: String, environment: StoreEnvironment = .production, transactions: [Transaction], renewals: [Renewal] = [],
        bundleID: String? = nil
    ) {
        self.receiptData = receiptData
        self.bundleID = bundleID
        self.environment = environment
        self.transactions = transactions
        self.renewals = renewals
    }
}

/// A misbehaviour of `verifyReceipt` for one receipt.
public enum AppleReceiptFault: Sendable, Hashable {
    /// Answer HTTP 200 with this `status` (e.g. 21005, 21010) the next `times` requests.
    case status(Int, times: Int)
    /// Answer this HTTP status with no body the next `times` requests.
    case http(Int, times: Int)
    /// Answer 200 with a body that is not JSON.
    case malformedBody
}

/// Apple's legacy `POST /verifyReceipt` on loopback.
///
/// Paths: `/verifyReceipt` serves every receipt in its own environment (the answer's `environment` says which);
/// `/production/verifyReceipt` answers 21007 for sandbox receipts and `/sandbox/verifyReceipt` 21008 for
/// production ones, so a client can be pointed at two distinct URLs. A wrong `password` is status 21004, an
/// unknown receipt 21003, a request without `receipt-data` 21002.
public struct AppleReceiptSimulator: SimulatorRoute {
    public let sharedSecret: String
    /// The `receipt.bundle_id` of every receipt that names none of its own.
    public let bundleID: String
    private let state: AppleReceiptSimulatorState

    public init(sharedSecret: String, bundleID: String, scenarios: [AppleReceiptScenario] = []) {
        self.sharedSecret = sharedSecret
        self.bundleID = bundleID
        self.state = AppleReceiptSimulatorState(scenarios: scenarios)
    }

    /// Adds or replaces a receipt.
    public func setScenario(_ scenario: AppleReceiptScenario) async { await state.set(scenario) }
    /// Sets (or clears, with nil) the fault for a receipt.
    public func setFault(_ fault: AppleReceiptFault?, for receiptData: String) async { await state.setFault(fault, for: receiptData) }
    /// Requests received (every path, every outcome).
    public func totalRequests() async -> Int { await state.requests }
    /// The `exclude-old-transactions` flag of the last request.
    public func lastExcludeOldTransactions() async -> Bool? { await state.lastExclude }

    public func handle(_ request: SimulatorRequest) async -> SimulatorResponse? {
        var segments = request.pathSegments
        var only: StoreEnvironment?
        if segments.count == 2, let environment = StoreEnvironment(rawValue: segments[0]) {
            only = environment
            segments.removeFirst()
        }
        guard segments == ["verifyReceipt"] else { return nil }
        await state.countRequest()
        guard request.method == "POST" else { return status(21000) }
        guard let object = try? JSONSerialization.jsonObject(with: request.body) as? [String: Any],
            let receipt = object["receipt-data"] as? String, !receipt.isEmpty
        else { return status(21002) }
        await state.recordExclude(object["exclude-old-transactions"] as? Bool)
        switch await state.takeFault(for: receipt) {
        case .status(let code, _)?: return status(code)
        case .http(let code, _)?: return SimulatorResponse(status: code)
        case .malformedBody?: return .json(200, Data(#"{"status":0,"latest_receipt_info":[{"#.utf8))
        case nil: break
        }
        guard let scenario = await state.scenario(for: receipt) else { return status(21003) }
        if only == .production && scenario.environment == .sandbox { return status(21007) }
        if only == .sandbox && scenario.environment == .production { return status(21008) }
        guard (object["password"] as? String) == sharedSecret else { return status(21004, environment: scenario.environment) }
        return answer(scenario)
    }

    private func status(_ code: Int, environment: StoreEnvironment? = nil) -> SimulatorResponse {
        var body: [String: Any] = ["status": code]
        if let environment { body["environment"] = environment == .production ? "Production" : "Sandbox" }
        if (21100...21199).contains(code) { body["is_retryable"] = true }
        return .json(200, (try? JSONSerialization.data(withJSONObject: body, options: [.sortedKeys])) ?? Data())
    }

    private func answer(_ scenario: AppleReceiptScenario) -> SimulatorResponse {
        func ms(_ date: Date) -> String { String(date.unixMilliseconds) }
        let latest: [[String: String]] = scenario.transactions.map { t in
            var entry: [String: String] = [
                "original_transaction_id": t.originalTransactionID, "transaction_id": t.transactionID, "product_id": t.productID,
                "purchase_date_ms": ms(t.purchaseDate), "original_purchase_date_ms": ms(t.purchaseDate), "quantity": "1",
                "is_trial_period": t.isTrialPeriod ? "true" : "false", "is_in_intro_offer_period": "false",
                "in_app_ownership_type": "PURCHASED", "web_order_line_item_id": "1" + t.transactionID,
            ]
            if let expires = t.expiresDate { entry["expires_date_ms"] = ms(expires) }
            if let cancelled = t.cancellationDate {
                entry["cancellation_date_ms"] = ms(cancelled)
                entry["cancellation_reason"] = "0"
            }
            if t.isUpgraded { entry["is_upgraded"] = "true" }
            return entry
        }
        let pending: [[String: String]] = scenario.renewals.map { r in
            var entry: [String: String] = [
                "original_transaction_id": r.originalTransactionID, "product_id": r.productID, "auto_renew_product_id": r.productID,
                "auto_renew_status": r.autoRenew ? "1" : "0", "is_in_billing_retry_period": r.isInBillingRetryPeriod ? "1" : "0",
            ]
            if let grace = r.gracePeriodExpiresDate { entry["grace_period_expires_date_ms"] = ms(grace) }
            if let intent = r.expirationIntent { entry["expiration_intent"] = String(intent) }
            return entry
        }
        let body: [String: Any] = [
            "status": 0, "environment": scenario.environment == .production ? "Production" : "Sandbox",
            "latest_receipt": scenario.receiptData, "latest_receipt_info": latest, "pending_renewal_info": pending,
            "receipt": [
                "bundle_id": scenario.bundleID ?? bundleID,
                "receipt_type": scenario.environment == .production ? "Production" : "ProductionSandbox",
            ],
        ]
        return .json(200, (try? JSONSerialization.data(withJSONObject: body, options: [.sortedKeys])) ?? Data())
    }
}

/// The receipt simulator's mutable state.
actor AppleReceiptSimulatorState {
    private var scenarios: [String: AppleReceiptScenario] = [:]
    private var faults: [String: (fault: AppleReceiptFault, remaining: Int)] = [:]
    private(set) var requests = 0
    private(set) var lastExclude: Bool?

    init(scenarios: [AppleReceiptScenario]) {
        for scenario in scenarios { self.scenarios[scenario.receiptData] = scenario }
    }

    func set(_ scenario: AppleReceiptScenario) { scenarios[scenario.receiptData] = scenario }
    func scenario(for receipt: String) -> AppleReceiptScenario? { scenarios[receipt] }
    func countRequest() { requests += 1 }
    func recordExclude(_ flag: Bool?) { lastExclude = flag }

    func setFault(_ fault: AppleReceiptFault?, for receipt: String) {
        guard let fault else {
            faults[receipt] = nil
            return
        }
        let times: Int =
            switch fault {
            case .status(_, let times), .http(_, let times): times
            case .malformedBody: Int.max
            }
        faults[receipt] = (fault, times)
    }

    func takeFault(for receipt: String) -> AppleReceiptFault? {
        guard let entry = faults[receipt], entry.remaining > 0 else { return nil }
        if entry.remaining != Int.max { faults[receipt] = (entry.fault, entry.remaining - 1) }
        return entry.fault
    }
}
