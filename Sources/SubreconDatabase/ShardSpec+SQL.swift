import SubreconPorts

extension ShardSpec {
    /// The SQL predicate (over column `id`) selecting this shard, as `ShardSpec.hash` computes it; `nil` for a single
    /// shard.
    var sqlPredicate: String? {
        count == 1 ? nil : "mod(('x' || substr(md5(id), 1, 8))::bit(32)::bigint, \(count)) = \(index)"
    }
}
