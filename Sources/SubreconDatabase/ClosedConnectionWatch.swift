import Logging
import PostgresNIO
import SubreconPorts
import Synchronization

/// Makes every statement on a connection end when the connection does (CONTRACT "What `run` checks first": every
/// database wait has a deadline). A statement written to a connection that already closed — the server restarted,
/// or the pool handed out a connection in the moment it closed — is otherwise never answered: PostgresNIO drops the
/// write and its promise waits forever, so a run that lost its database hung instead of ending with exit 75.
///
/// One close callback per open connection (not one per statement, which would pile up on a connection that serves a
/// whole night) wakes the statements waiting on it; each statement runs in a task of its own and its caller resumes
/// at whichever comes first, the answer or the close.
final class ClosedConnectionWatch: Sendable {
    static let shared = ClosedConnectionWatch()

    private struct State {
        var nextToken = 0
        /// Open connections watched → the connection (held, so that its identifier cannot name another connection
        /// before its close callback removed the entry) and the statements waiting on it.
        var waiting: [ObjectIdentifier: (connection: PostgresConnection, waiters: [Int: @Sendable () -> Void])] = [:]
    }
    private let state = Mutex(State())

    /// Runs `operation` (statements on `connection`); throws `closed` at once when the connection is closed or closes
    /// before `operation` ends.
    func race<T: Sendable>(
        _ connection: PostgresConnection, closed: DatabaseError = ClosedConnectionWatch.closed,
        _ operation: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        guard !connection.isClosed else { throw closed }
        let claim = Claim()
        let work = WorkBox()
        return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            let token = register(connection) {
                if claim.take() { continuation.resume(throwing: closed) }
                work.cancel()
            }
            guard !claim.taken else { return }
            work.start {
                do {
                    let value = try await operation()
                    if claim.take() { continuation.resume(returning: value) }
                } catch {
                    if claim.take() { continuation.resume(throwing: error) }
                }
                self.unregister(connection, token)
            }
        }
    }

    static let closed = DatabaseError.database(operation: "query", reason: "the database connection closed (server restarted or ended it)")

    /// Calls `onClose` once `connection` closes (soon, when it already has); returns the token to unregister with.
    private func register(_ connection: PostgresConnection, onClose: @escaping @Sendable () -> Void) -> Int {
        let key = ObjectIdentifier(connection)
        let (token, isNew) = state.withLock { state -> (Int, Bool) in
            state.nextToken += 1
            let isNew = state.waiting[key] == nil
            state.waiting[key, default: (connection, [:])].waiters[state.nextToken] = onClose
            return (state.nextToken, isNew)
        }
        if isNew {
            connection.closeFuture.whenComplete { [self] _ in
                let waiters = state.withLock { $0.waiting.removeValue(forKey: key)?.waiters } ?? [:]
                for waiter in waiters.values { waiter() }
            }
        }
        return token
    }

    private func unregister(_ connection: PostgresConnection, _ token: Int) {
        state.withLock { _ = $0.waiting[ObjectIdentifier(connection)]?.waiters.removeValue(forKey: token) }
    }

    /// Connections watched right now (tests: the watch holds nothing once statements ended and connections closed).
    var watchedConnections: Int { state.withLock { $0.waiting.count } }

    /// True for the first taker only.
    private final class Claim: Sendable {
        private let state = Mutex(false)
        func take() -> Bool {
            state.withLock { taken in
                defer { taken = true }
                return !taken
            }
        }
        var taken: Bool { state.withLock { $0 } }
    }

    /// The task running the statement, cancelled when the connection closes first.
    private final class WorkBox: Sendable {
        private let state = Mutex<(task: Task<Void, Never>?, cancelled: Bool)>((nil, false))
        func start(_ body: @escaping @Sendable () async -> Void) {
            let task = Task { await body() }
            let cancelNow = state.withLock { state -> Bool in
                state.task = task
                return state.cancelled
            }
            if cancelNow { task.cancel() }
        }
        func cancel() {
            let task = state.withLock { state -> Task<Void, Never>? in
                state.cancelled = true
                return state.task
            }
            task?.cancel()
        }
    }
}

extension PostgresConnection {
    /// `query`, ended by the connection closing (`ClosedConnectionWatch`): what every statement of the job uses.
    @discardableResult
    func run(_ query: PostgresQuery, logger: Logger) async throws -> PostgresRowSequence {
        try await ClosedConnectionWatch.shared.race(self) { try await self.query(query, logger: logger) }
    }
}
