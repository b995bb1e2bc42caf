import SubreconCore

// The database reads only store adapters make (not the job's ports: the job never calls them), owned here beside the
// job's so an adapter can be composed over any database, PostgreSQL or a test's in memory (docs/ARCHITECTURE.md,
// "Ports").

/// Where legacy App Store receipts are kept (`apple_receipts`), and which rows hold which Apple original
/// transaction id.
public protocol ReceiptLookup: Sendable {
    /// The stored base64 receipt of `userID`, or nil.
    func receipt(for userID: String) async throws -> String?
    /// Users other than `userID` whose row already holds `originalTransactionID`.
    func otherUsers(holdingOriginalTransactionID originalTransactionID: String, besides userID: String) async throws -> [String]
    /// The users whose row holds each of `originalTransactionIDs`, at most `limit` each in id order, in one read; an id
    /// no row holds is absent.
    func originalTransactionHolders(_ originalTransactionIDs: [String], limit: Int) async throws -> [String: [String]]
}

/// How many holders of an original transaction a lookup names (CONTRACT "Whose purchase it is": a conflict's message
/// names them), whatever database answers it.
public enum OriginalTransactionHolders {
    /// At most this many other holders of an original transaction are named.
    public static let named = 5
    /// Holders read per original transaction: one more than named, as the asking user's own row may be among them.
    public static let read = named + 1

    /// Of `holders` (read with `limit: read`, in id order), the first `named` that are not `userID`.
    public static func others(_ holders: [String]?, besides userID: String) -> [String] {
        Array((holders ?? []).filter { $0 != userID }.prefix(named))
    }
}

/// Every database read the store adapters make, each port named: the composition root passes each its adapter, and
/// no port is found by a cast.
public struct AdapterReads: Sendable {
    public var receipts: any ReceiptLookup
    public var refundsSeen: any RefundsSeenLookup
    public var knownCustomers: any KnownRevenueCatCustomers

    public init(receipts: any ReceiptLookup, refundsSeen: any RefundsSeenLookup, knownCustomers: any KnownRevenueCatCustomers) {
        self.receipts = receipts
        self.refundsSeen = refundsSeen
        self.knownCustomers = knownCustomers
    }

    /// Every read served by one value (the in-memory kit's database).
    public init(_ database: any ReceiptLookup & RefundsSeenLookup & KnownRevenueCatCustomers) {
        self.init(receipts: database, refundsSeen: database, knownCustomers: database)
    }
}

/// The refunds kept on earlier nights (`refunds_seen`, CONTRACT "Finance figures"), for a store adapter whose store
/// states a refund only once, in a feed (Google's voided purchases): a lookup on a later night still knows the line
/// was refunded.
public protocol RefundsSeenLookup: Sendable {
    /// The refunds kept for `userID` in `store` (`play_store`, ...), at most `limit`, newest first.
    func refundsSeen(userID: String, store: String, limit: Int) async throws -> [SeenRefund]
}
