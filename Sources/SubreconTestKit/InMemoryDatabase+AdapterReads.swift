import Foundation
import SubreconCore
import SubreconPorts
import Synchronization

// The reads store adapters make, in memory, as the PostgreSQL adapters answer them: stored receipts, who holds an
// Apple original transaction (never a blank id, in id order), the refunds kept on earlier nights, the users
// RevenueCat answered for (`revenuecat_known_customers`); and the catalog a test changes between nights.

extension InMemoryDatabase: ReceiptLookup, RefundsSeenLookup, KnownRevenueCatCustomers {
    public func isKnownRevenueCatCustomer(_ userID: String) async throws -> Bool {
        state.withLock { $0.knownRevenueCatCustomers.contains(userID) }
    }

    public func rememberRevenueCatCustomer(_ userID: String) async throws {
        _ = state.withLock { $0.knownRevenueCatCustomers.insert(userID) }
    }

    /// Stores `receipt` for `userID` (`apple_receipts`), replacing any.
    public func saveReceipt(_ receipt: String, for userID: String) {
        state.withLock { $0.receipts[userID] = receipt }
    }

    /// Adds or replaces `entries` in `product_tiers`; with `replacing`, they become the whole table.
    public func upsertProducts(_ entries: [ProductCatalog.Entry], replacing: Bool = false) {
        state.withLock { state in
            var merged = replacing ? [:] : state.catalog.entries
            for entry in entries { merged[entry.productID] = entry }
            state.catalog = ProductCatalog(Array(merged.values))
        }
    }

    public func receipt(for userID: String) async throws -> String? {
        state.withLock { $0.receipts[userID] }.flatMap { $0.isEmpty ? nil : $0 }
    }

    public func otherUsers(holdingOriginalTransactionID originalTransactionID: String, besides userID: String) async throws -> [String] {
        let holders = try await originalTransactionHolders([originalTransactionID], limit: OriginalTransactionHolders.read)
        return OriginalTransactionHolders.others(holders[originalTransactionID], besides: userID)
    }

    public func originalTransactionHolders(_ originalTransactionIDs: [String], limit: Int) async throws -> [String: [String]] {
        let wanted = Set(originalTransactionIDs.compactMap(UserRow.storedIdentifier))
        guard !wanted.isEmpty, limit > 0 else { return [:] }
        return state.withLock { state in
            var holders: [String: [String]] = [:]
            for row in state.users.values.sorted(by: { $0.id < $1.id }) {
                guard let held = row.originalTransactionID.flatMap(UserRow.storedIdentifier), wanted.contains(held),
                    holders[held, default: []].count < limit
                else { continue }
                holders[held, default: []].append(row.id)
            }
            return holders
        }
    }

    public func refundsSeen(userID: String, store: String, limit: Int) async throws -> [SeenRefund] {
        let kept = state.withLock { state in
            state.refundsSeen.values.filter { $0.userID == userID && $0.refund.store == store }.map(\.refund)
        }
        return Array(kept.sorted { $0.refundedAt > $1.refundedAt }.prefix(limit))
    }
}

// MARK: - What a world's tests count

extension InMemoryDatabase: RunReportRecords {
    /// Kept report inputs are what `report RUN_ID` rebuilds from; a test reads them with `runReports(_:)`.
    public func recordRunReports(runID: String, _ files: [String: String]) async throws {
        state.withLock { $0.runReports[runID] = files }
    }

    /// The report inputs `runID` kept, by file name; nil when it kept none.
    public func runReports(_ runID: String) -> [String: String]? { state.withLock { $0.runReports[runID] } }

    /// Every refund kept in `refunds_seen`, in no particular order.
    public var keptRefunds: [SeenRefund] { keptRefundsByUser.map(\.refund) }

    /// Every refund kept in `refunds_seen` with the user it was kept for, in no particular order.
    public var keptRefundsByUser: [(userID: String, refund: SeenRefund)] {
        state.withLock { $0.refundsSeen.values.map { ($0.userID, $0.refund) } }
    }

    /// Every orphan kept across nights (`reconcile_orphans`), in no particular order.
    public var keptOrphans: [Orphan] { state.withLock { Array($0.keptOrphans.values) } }

    /// The status of every run recorded, in no particular order.
    public var runStatuses: [RunStatus] { state.withLock { $0.runs.values.map(\.record.status) } }
}
