import SubreconCore
import SubreconDatabase

// The database reads only store adapters make (not the job's ports: the job never calls them).

/// Where legacy App Store receipts are kept (`apple_receipts`), and which rows hold which Apple original
/// transaction id. Production: `SubscriptionDatabase`.
public protocol ReceiptLookup: Sendable {
    /// The stored base64 receipt of `userID`, or nil.
    func receipt(for userID: String) async throws -> String?
    /// Users other than `userID` whose row already holds `originalTransactionID`.
    func otherUsers(holdingOriginalTransactionID originalTransactionID: String, besides userID: String) async throws -> [String]
    /// The users whose row holds each of `originalTransactionIDs`, at most `limit` each in id order, in one read; an id
    /// no row holds is absent.
    func originalTransactionHolders(_ originalTransactionIDs: [String], limit: Int) async throws -> [String: [String]]
}

extension SubscriptionDatabase: ReceiptLookup {}

/// The refunds kept on earlier nights (`refunds_seen`, CONTRACT "Finance figures"), for a store adapter whose store states a refund
/// only once, in a feed (Google's voided purchases): a lookup on a later night still knows the line was refunded.
/// Production: `SubscriptionDatabase`.
public protocol RefundsSeenLookup: Sendable {
    /// The refunds kept for `userID` in `store` (`play_store`, ...), at most `limit`, newest first.
    func refundsSeen(userID: String, store: String, limit: Int) async throws -> [SeenRefund]
}

extension SubscriptionDatabase: RefundsSeenLookup {}
