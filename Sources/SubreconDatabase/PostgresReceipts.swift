import Foundation
import PostgresNIO
import SubreconPorts

extension PostgresReceipts {
    /// The legacy App Store receipt (base64, as the app uploaded it) stored for `userID` in `apple_receipts`,
    /// or nil when there is none. The receipt is a credential-like blob: callers never log it.
    public func receipt(for userID: String) async throws -> String? {
        try await run("read receipt") {
            var binds = PostgresBindings()
            binds.append(userID)
            let query = PostgresQuery(unsafeSQL: "select receipt_data from apple_receipts where user_id = $1", binds: binds)
            for try await data in try await session.query(query, logger: logger).decode(String.self) {
                return data.isEmpty ? nil : data
            }
            return nil
        }
    }

    /// The ids of the users other than `userID` whose row already holds `originalTransactionID` (at most
    /// `OriginalTransactionHolders.named`, in id order); none for an empty or whitespace-only id, which no row holds (`held`).
    public func otherUsers(holdingOriginalTransactionID originalTransactionID: String, besides userID: String) async throws -> [String] {
        let holders = try await originalTransactionHolders([originalTransactionID], limit: OriginalTransactionHolders.read)
        return OriginalTransactionHolders.others(holders[originalTransactionID], besides: userID)
    }

    /// The users whose row holds each of `originalTransactionIDs`, in one statement (one read of the table, or of its
    /// index on the column): at most `limit` ids per original transaction id, in id order. An id no row holds is
    /// absent, and so is an empty or whitespace-only one, which no row holds (`held`). `CoalescedReceiptLookup` asks it
    /// for many users' ids at once.
    public func originalTransactionHolders(_ originalTransactionIDs: [String], limit: Int) async throws -> [String: [String]] {
        let distinct = Self.held(originalTransactionIDs)
        guard !distinct.isEmpty, limit > 0 else { return [:] }
        return try await run("find original transaction ids") {
            var binds = PostgresBindings()
            binds.append(distinct)
            binds.append(limit)
            let query = PostgresQuery(
                unsafeSQL: """
                    select k, id from (select iap_original_transaction_id as k, id, \
                    row_number() over (partition by iap_original_transaction_id order by id) as n \
                    from users where iap_original_transaction_id = any($1::text[])) as h where n <= $2 order by k, id
                    """, binds: binds)
            var held: [String: [String]] = [:]
            for try await (id, user) in try await session.query(query, logger: logger).decode((String, String).self) {
                held[id, default: []].append(user)
            }
            return held
        }
    }

    /// Stores (or replaces) the legacy receipt of `userID` (tests and the demo; apps write this table themselves).
    package func saveReceipt(_ receiptData: String, for userID: String) async throws {
        try await run("save receipt") {
            var binds = PostgresBindings()
            binds.append(userID)
            binds.append(receiptData)
            let query = PostgresQuery(
                unsafeSQL: """
                    insert into apple_receipts (user_id, receipt_data) values ($1, $2)
                    on conflict (user_id) do update set receipt_data = excluded.receipt_data, updated_at = now()
                    """, binds: binds)
            try await session.query(query, logger: logger)
        }
    }
}
