import PostgresNIO
import SubreconPorts

extension SubscriptionDatabase {
    /// Runs `body` while holding the advisory locks of `shard` (`ShardLock`: overlapping layouts exclude each
    /// other), on one pooled connection leased for the whole body (the body's own queries use other connections).
    /// Returns nil at once, without running `body`, when another session holds this shard or one overlapping it.
    /// `subrecon run` uses `ShardLock.withLock`, which holds the lock on a dedicated connection and watches it.
    package func withShardLock<T: Sendable>(shard: ShardSpec, _ body: () async throws -> T) async throws -> T? {
        do {
            return try await session.withLease { connection -> T? in
                guard try await ShardLock.take(shard, on: connection, session: session.setup, logger: logger) else { return nil }
                logger.debug("took shard lock", metadata: ["shard": "\(shard)"])
                do {
                    let value = try await body()
                    try await connection.run(ShardLock.unlock, logger: logger)
                    return value
                } catch {
                    _ = try? await connection.run(ShardLock.unlock, logger: logger)
                    throw error
                }
            }
        } catch let error as DatabaseError {
            throw error
        } catch let error as PSQLError {
            throw DatabaseError.wrap(error, operation: "shard lock")
        }
    }
}
