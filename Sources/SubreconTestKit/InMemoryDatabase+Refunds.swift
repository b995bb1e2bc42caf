import Foundation
import SubreconCore
import SubreconJob
import SubreconPorts
import Synchronization

// `refunds_seen` in memory, as `PostgresRefundRecords` keeps it: once per store transaction, the first run to
// keep a refund named with it.

extension InMemoryDatabase: RefundRecords {
    public func recordRefunds(runID: String, _ refunds: [(userID: String, refund: SeenRefund)]) async throws -> Int {
        state.withLock { state in
            var added = 0
            for (user, refund) in refunds {
                let key = "\(refund.store)|\(refund.transactionID)"
                guard state.refundsSeen[key] == nil else { continue }
                state.refundsSeen[key] = (userID: user, refund: refund, runID: runID)
                added += 1
            }
            return added
        }
    }

    public func feedRefunds(runID: String) async throws -> [String: [SeenRefund]] {
        let kept = state.withLock { $0.refundsSeen.values.filter { $0.runID == runID } }
        return Dictionary(grouping: kept, by: \.userID).mapValues { refunds in
            refunds.map(\.refund).sorted { ($0.refundedAt, $0.store, $0.transactionID) < ($1.refundedAt, $1.store, $1.transactionID) }
        }
    }

    public func refundReview(asOf: Date, days: Int, minimumRefunds: Int) async throws -> [RefundReviewEntry] {
        let since = asOf.addingTimeInterval(-Double(days) * 86_400)
        let kept = state.withLock { $0.refundsSeen.values.filter { $0.refund.refundedAt > since && $0.refund.refundedAt <= asOf } }
        return Dictionary(grouping: kept, by: \.userID).compactMap { user, refunds -> RefundReviewEntry? in
            guard refunds.count >= minimumRefunds else { return nil }
            let dates = refunds.map(\.refund.refundedAt)
            return RefundReviewEntry(
                userID: user, refunds: refunds.count, stores: Set(refunds.map(\.refund.store)).sorted(), firstRefund: dates.min() ?? asOf,
                lastRefund: dates.max() ?? asOf)
        }.sorted { $0.userID < $1.userID }
    }
}
