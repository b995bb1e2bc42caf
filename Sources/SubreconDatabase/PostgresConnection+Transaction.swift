import Logging
import PostgresNIO

extension PostgresConnection {
    /// Runs `body` between `BEGIN` and `COMMIT`, rolling back when it throws. The body's error is rethrown as is
    /// (unlike `withTransaction`, which wraps it), so typed outcomes such as a lost compare-and-set stay visible.
    func inTransaction<T>(logger: Logger, _ body: (PostgresConnection) async throws -> T) async throws -> T {
        try await query("begin", logger: logger)
        do {
            let value = try await body(self)
            try await query("commit", logger: logger)
            return value
        } catch {
            _ = try? await query("rollback", logger: logger)
            throw error
        }
    }
}
