import Crypto

/// One slice of the users: those whose stable id hash mod `count` equals `index` (`--shard I/N`).
///
/// The hash is the first 8 hex digits of `md5(id)` (UTF-8) read as an unsigned 32-bit integer. PostgreSQL computes it
/// as `('x' || substr(md5(id), 1, 8))::bit(32)::bigint` (non-negative: `bit(32)` casts to `bigint` unsigned);
/// `ShardSpec.hash(of:)` computes the same in Swift, so a machine can tell which shard owns a user without a query.
public struct ShardSpec: Sendable, Hashable, CustomStringConvertible {
    public var index: Int
    public var count: Int

    /// - Precondition: `count >= 1` and `0 <= index < count`.
    public init(index: Int, count: Int) {
        precondition(count >= 1 && (0..<count).contains(index), "shard index must be in 0..<count")
        self.index = index
        self.count = count
    }

    /// A shard read back from a stored run; a value out of range (a damaged row) is an error, never a trap.
    public static func stored(index: Int, count: Int) throws(StoredShardOutOfRange) -> ShardSpec {
        guard count >= 1, (0..<count).contains(index) else { throw StoredShardOutOfRange(index: index, count: count) }
        return ShardSpec(index: index, count: count)
    }

    /// The whole table.
    public static let all = ShardSpec(index: 0, count: 1)

    /// Parses `I/N` as given to `--shard`; nil when malformed or out of range.
    public init?(parsing text: String) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let index = Int(parts[0]), let count = Int(parts[1]), count >= 1,
            (0..<count).contains(index)
        else { return nil }
        self.init(index: index, count: count)
    }

    /// `I/N`.
    public var description: String { "\(index)/\(count)" }

    /// The stable hash of a user id: `md5(id)`'s first four bytes, big-endian.
    public static func hash(of id: String) -> UInt32 {
        let digest = Array(Insecure.MD5.hash(data: Array(id.utf8)))
        return digest[0..<4].reduce(0) { $0 << 8 | UInt32($1) }
    }

    /// True when this shard owns `id`.
    public func contains(_ id: String) -> Bool {
        Int(Self.hash(of: id) % UInt32(count)) == index
    }
}

/// A stored run's shard out of range (a damaged row).
public struct StoredShardOutOfRange: Error, CustomStringConvertible, Sendable {
    public var index: Int
    public var count: Int
    public var description: String { "stored shard \(index)/\(count) is out of range" }
}
