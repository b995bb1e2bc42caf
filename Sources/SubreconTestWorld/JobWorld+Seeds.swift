import Foundation
import StoreSimulator
import SubreconCore
import SubreconJob
import SubreconReports

// What a job test seeds in a world and reads back from it, the same in either backend.

extension JobWorld {
    public func row(
        _ id: String, tier: Int, _ status: String, end: Double?, grace: Double? = nil, product: String = "premium_monthly",
        txn: String? = nil
    ) -> UserRow {
        UserRow(
            id: id, currentTier: tier, status: status, endDate: end.map(Self.day), graceEndsAt: grace.map(Self.day),
            source: "apple_iap", productID: product, originalTransactionID: txn, autoRenew: true)
    }

    public static func subscription(
        _ product: String = "premium_monthly", purchased: Double = -30, expires: Double?, grace: Double? = nil,
        refunded: Double? = nil, billing: Double? = nil, txn: String? = nil, price: Decimal? = 9.99, currency: String = "USD"
    ) -> SimulatedSubscription {
        SimulatedSubscription(
            productID: product, purchaseDate: day(purchased), expiresDate: expires.map(day), gracePeriodExpiresDate: grace.map(day),
            refundedAt: refunded.map(day), billingIssuesDetectedAt: billing.map(day), storeTransactionID: txn,
            price: price.map { SimulatedPrice(amount: $0, currency: currency) })
    }

    /// Inserts `row` and, with `subscriptions`, makes RevenueCat know its user with them.
    public func seed(_ row: UserRow, _ subscriptions: SimulatedSubscription...) async throws {
        try await db.insertUsers([row])
        if !subscriptions.isEmpty {
            await revenueCat.setSubscriber(SimulatedSubscriber(firstSeen: Self.day(-300), subscriptions: subscriptions), for: row.id)
        }
    }

    public func user(_ id: String) async throws -> UserRow? { try await db.user(id: id) }
    public func auditRows(_ id: String) async throws -> Int { try await db.count(.audits(user: id)) }
    public func intents(_ id: String) async throws -> Int { try await db.count(.intents(user: id)) }

    /// The drift report's rows, parsed from drift.json, keyed by user id.
    public func report(_ result: RunResult) throws -> [String: ReportRow] {
        let data = try Data(contentsOf: result.folder.appendingPathComponent("drift.json"))
        let rows = try JSONDecoder().decode([ReportRow].self, from: data)
        return Dictionary(uniqueKeysWithValues: rows.map { ($0.userID, $0) })
    }

    /// The lines of one CSV report of `result`.
    public func csvLines(_ result: RunResult, _ name: String) throws -> [String] {
        let text = try String(contentsOf: result.folder.appendingPathComponent(name), encoding: .utf8)
        return text.components(separatedBy: "\r\n").filter { !$0.isEmpty }
    }
}

extension WorldDatabase {
    public func user(id: String) async throws -> UserRow? { try await user(id) }
}
