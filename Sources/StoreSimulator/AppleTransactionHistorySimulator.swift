import Foundation
import SubreconCore

/// One non-consumable App Store purchase the simulator knows: answered by `GET /inApps/v2/history/{id}` for its own
/// transaction ids and for `customerTransactionIDs` (other transactions of the same customer, e.g. a subscription).
public struct AppleNonConsumableScenario: Sendable, Hashable {
    public var originalTransactionID: String
    public var transactionID: String
    public var productID: String
    public var environment: StoreEnvironment
    public var purchaseDate: Date
    public var revocationDate: Date?
    /// Milliunits (49990 = 49.99).
    public var price: Int64?
    public var currency: String?
    public var customerTransactionIDs: [String]
    /// The transaction's `type`; `Non-Consumable` unless a test wants another (`Consumable`).
    public var type = "Non-Consumable"
    /// `appAccountToken`: the buyer's account (a UUID) the app set at purchase; nil: left out.
    public var appAccountToken: String?

    public init(
        originalTransactionID: String, transactionID: String? = nil, productID: String, environment: StoreEnvironment = .production,
        purchaseDate: Date, revocationDate: Date? = nil, price: Int64? = nil, currency: String? = nil,
        customerTransactionIDs: [String] = []
    ) {
        self.originalTransactionID = originalTransactionID
        self.transactionID = transactionID ?? originalTransactionID
        self.productID = productID
        self.environment = environment
        self.purchaseDate = purchaseDate
        self.revocationDate = revocationDate
        self.price = price
        self.currency = currency
        self.customerTransactionIDs = customerTransactionIDs
    }

    func answers(_ id: String) -> Bool { id == originalTransactionID || id == transactionID || customerTransactionIDs.contains(id) }
}

/// A signed non-consumable transaction as Apple writes it: no `expiresDate`, no subscription group.
struct SimulatedNonConsumablePayload: Encodable {
    var originalTransactionId: String
    var transactionId: String
    var bundleId: String
    var productId: String
    var purchaseDate: Int64
    var originalPurchaseDate: Int64
    var quantity = 1
    var type: String
    var inAppOwnershipType = "PURCHASED"
    var signedDate: Int64
    var revocationDate: Int64?
    var revocationReason: Int?
    var environment: String
    var transactionReason = "PURCHASE"
    var price: Int64?
    var currency: String?
    var appAccountToken: String?
}

extension AppStoreSimulatorState {
    func addNonConsumable(_ scenario: AppleNonConsumableScenario) {
        nonConsumables.removeAll { $0.transactionID == scenario.transactionID }
        nonConsumables.append(scenario)
    }
    func countHistory(_ id: String) { historyCounts[id, default: 0] += 1 }
}

extension AppStoreSimulator {
    /// Transactions a history page holds at most (Apple: 20).
    public static let historyPageSize = 20
    /// The key of `setFault` for the history of `id` (the subscription route's faults stay its own).
    public static func historyFaultKey(_ id: String) -> String { "history:" + id }

    /// Adds (or replaces, by transaction id) a non-consumable purchase.
    public func addNonConsumable(_ scenario: AppleNonConsumableScenario) async { await state.addNonConsumable(scenario) }
    /// History requests received for `id`.
    public func historyRequests(for id: String) async -> Int { await state.historyCounts[id, default: 0] }

    /// `GET /inApps/v2/history/{id}`: the bearer check, scripted faults (`historyFaultKey`), then the customer's
    /// non-consumables in the environment of the first (filtered by `productType` when stated; Apple's other product
    /// types are not modelled), 20 a page continued by `revision`; 200 with none for a known subscription id,
    /// 404/4040010 for an id the simulator does not know (in this environment).
    func history(_ request: SimulatorRequest, id: String, only: StoreEnvironment?) async -> SimulatorResponse {
        await state.countHistory(id)
        let token = AppStoreBearerToken.check(
            request.headers["authorization"], key: apiPublicKey, keyID: keyID, issuerID: issuerID, bundleID: bundleID, now: now())
        await state.record(token)
        guard token.accepted else { return SimulatorResponse(status: 401) }
        if case .answer(let response) = await faultAnswer(for: Self.historyFaultKey(id)) { return response }
        let all = await state.nonConsumables
        let owned = all.filter { $0.answers(id) && (only == nil || $0.environment == only) }
        let subscription = await state.scenario(for: id).flatMap { only == nil || $0.environment == only ? $0 : nil }
        guard let environment = owned.first?.environment ?? subscription?.environment else {
            return errorResponse(404, code: 4_040_010, message: "Transaction id not found.")
        }
        let type = request.query["productType"]
        let listed = owned.filter { $0.environment == environment && (type == nil || type == "NON_CONSUMABLE") }
        var offset = 0
        if let revision = request.query["revision"] {
            guard revision.hasPrefix("rev-"), let value = Int(revision.dropFirst(4)), (0...listed.count).contains(value) else {
                return errorResponse(400, code: 4_000_005, message: "Invalid request revision.")
            }
            offset = value
        }
        let page = Array(listed.dropFirst(offset).prefix(Self.historyPageSize))
        let next = offset + page.count
        do {
            let signed = try page.map { try pki.sign(payload: payload(of: $0)) }
            let body: [String: Any] = [
                "revision": "rev-\(next)", "hasMore": next < listed.count, "bundleId": bundleID, "appAppleId": appAppleID,
                "environment": environment == .production ? "Production" : "Sandbox", "signedTransactions": signed,
            ]
            return .json(200, try JSONSerialization.data(withJSONObject: body, options: [.sortedKeys]))
        } catch {
            return errorResponse(500, code: 5_000_000, message: "An unknown error occurred.")
        }
    }

    private func payload(of scenario: AppleNonConsumableScenario) -> SimulatedNonConsumablePayload {
        SimulatedNonConsumablePayload(
            originalTransactionId: scenario.originalTransactionID, transactionId: scenario.transactionID, bundleId: bundleID,
            productId: scenario.productID, purchaseDate: scenario.purchaseDate.unixMilliseconds,
            originalPurchaseDate: scenario.purchaseDate.unixMilliseconds, type: scenario.type,
            signedDate: signingNow().unixMilliseconds, revocationDate: scenario.revocationDate?.unixMilliseconds,
            revocationReason: scenario.revocationDate == nil ? nil : 0,
            environment: scenario.environment == .production ? "Production" : "Sandbox", price: scenario.price,
            currency: scenario.price == nil ? nil : scenario.currency, appAccountToken: scenario.appAccountToken)
    }
}
