import AsyncHTTPClient
import Foundation
import SourceHTTP
import StoreSimulator

/// Records every attempt a client reports to its `RequestObserver`: the source tests assert what was counted.
public final class RecordingObserver: RequestObserver, @unchecked Sendable {
    public struct Entry: Equatable, Sendable {
        public var source: String
        public var status: Int?
        public var retried: Bool

        public init(source: String, status: Int?, retried: Bool) {
            self.source = source
            self.status = status
            self.retried = retried
        }
    }

    private let lock = NSLock()
    private var storage: [Entry] = []

    public init() {}

    public func requestFinished(source: String, status: Int?, retried: Bool) {
        lock.withLock { storage.append(Entry(source: source, status: status, retried: retried)) }
    }

    public var entries: [Entry] { lock.withLock { storage } }
    /// The HTTP status of each attempt (nil: no answer).
    public var statuses: [Int?] { entries.map(\.status) }
    /// Whether each attempt was a retry.
    public var retried: [Bool] { entries.map(\.retried) }
}

/// Starts a loopback `SimulatorServer` with `routes` and an `HTTPClient`, runs `body`, and shuts both down whether
/// `body` returns or throws.
public func withLoopback<T>(
    routes: [any SimulatorRoute], _ body: (SimulatorServer, HTTPClient) async throws -> T
) async throws -> T {
    let server = try await SimulatorServer.start(routes: routes)
    let http = HTTPClient(eventLoopGroupProvider: .singleton)
    let result: T
    do {
        result = try await body(server, http)
    } catch {
        try? await http.shutdown()
        await server.shutdown()
        throw error
    }
    try await http.shutdown()
    await server.shutdown()
    return result
}
