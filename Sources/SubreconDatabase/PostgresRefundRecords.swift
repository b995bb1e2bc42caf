import Foundation
import PostgresNIO
import SubreconCore
import SubreconPorts

extension PostgresRefundRecords {
    /// Keeps each refund once per store transaction (`refunds_seen`): a refund seen again (a rerun, a resumed run,
    /// the next night) changes nothing. Returns how many were new. Never touches `users` or the intents.
    @discardableResult
    public func recordRefunds(runID: String, _ refunds: [(userID: String, refund: SeenRefund)]) async throws -> Int {
        guard !refunds.isEmpty else { return 0 }
        // Text arrays throughout ('' for an unknown amount or currency), cast in SQL.
        var stores: [String] = []
        var ids: [String] = []
        var users: [String] = []
        var dates: [String] = []
        var amounts: [String] = []
        var currencies: [String] = []
        for (user, refund) in refunds {
            stores.append(refund.store)
            ids.append(refund.transactionID)
            users.append(user)
            dates.append(ISO8601.string(refund.refundedAt))
            amounts.append(
                refund.amount.map {
                    var value = $0
                    return NSDecimalString(&value, Locale(identifier: "en_US_POSIX"))
                } ?? "")
            currencies.append(refund.currency ?? "")
        }
        return try await run("record refunds") {
            let rows = try await session.query(
                """
                with added as (insert into refunds_seen (store, transaction_id, user_id, refunded_at, amount, currency, run_id) \
                select s, t, u, r::timestamptz, nullif(a, ''), nullif(c, ''), \(runID) \
                from unnest(\(stores)::text[], \(ids)::text[], \(users)::text[], \(dates)::text[], \(amounts)::text[], \
                \(currencies)::text[]) as x(s, t, u, r, a, c) \
                on conflict (store, transaction_id) do nothing returning 1) \
                select count(*)::int from added
                """, logger: logger)
            for try await added in rows.decode(Int.self) { return added }
            return 0
        }
    }

    /// The refunds kept for `userID` in `store`, at most `limit`, newest first (`refunds_seen_user_idx`).
    public func refundsSeen(userID: String, store: String, limit: Int) async throws -> [SeenRefund] {
        try await run("read refunds seen") {
            let rows = try await session.query(
                """
                select transaction_id, refunded_at, amount::text, currency from refunds_seen \
                where user_id = \(userID) and store = \(store) order by refunded_at desc limit \(limit)
                """, logger: logger)
            var refunds: [SeenRefund] = []
            for try await (transaction, at, amount, currency) in rows.decode((String, Date, String?, String?).self) {
                refunds.append(
                    SeenRefund(
                        store: store, transactionID: transaction, refundedAt: at,
                        amount: Self.decimal(amount), currency: currency))
            }
            return refunds
        }
    }

    /// The refunds `runID` was the first to keep, by user, each user's in `refunded_at` order: what a resumed run's
    /// feed-named rows carry again. Read once per resume (no index on `run_id`: one pass over the table).
    public func feedRefunds(runID: String) async throws -> [String: [SeenRefund]] {
        try await run("read the run's refunds") {
            let rows = try await session.query(
                """
                select user_id, store, transaction_id, refunded_at, amount::text, currency from refunds_seen \
                where run_id = \(runID) order by user_id, refunded_at, store, transaction_id
                """, logger: logger)
            var refunds: [String: [SeenRefund]] = [:]
            for try await (user, store, transaction, at, amount, currency) in rows.decode(
                (String, String, String, Date, String?, String?).self)
            {
                refunds[user, default: []].append(
                    SeenRefund(
                        store: store, transactionID: transaction, refundedAt: at, amount: Self.decimal(amount), currency: currency))
            }
            return refunds
        }
    }

    /// The users with at least `minimumRefunds` refunds seen with `refunded_at` in `(asOf - days, asOf]`, by user id.
    public func refundReview(asOf: Date, days: Int, minimumRefunds: Int) async throws -> [RefundReviewEntry] {
        let since = asOf.addingTimeInterval(-Double(days) * 86_400)
        return try await run("read refund review") {
            let rows = try await session.query(
                """
                select user_id, count(*)::int, string_agg(distinct store, ';' order by store), min(refunded_at), max(refunded_at) \
                from refunds_seen where refunded_at > \(since) and refunded_at <= \(asOf) \
                group by user_id having count(*) >= \(minimumRefunds) order by user_id
                """, logger: logger)
            var entries: [RefundReviewEntry] = []
            for try await (user, count, stores, first, last) in rows.decode((String, Int, String, Date, Date).self) {
                entries.append(
                    RefundReviewEntry(
                        userID: user, refunds: count, stores: stores.split(separator: ";").map(String.init), firstRefund: first,
                        lastRefund: last))
            }
            return entries
        }
    }
}
