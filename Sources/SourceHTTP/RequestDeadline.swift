import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOHTTP1

/// One HTTP request past its whole-request deadline (headers and body): AsyncHTTPClient's `execute(_:timeout:)`
/// bounds only the head, so a peer trickling its body a byte at a time would otherwise hold the request forever.
public struct RequestDeadlineExceeded: Error, Sendable, CustomStringConvertible {
    public var limit: Duration
    public var description: String { "no complete answer (headers and body) within \(limit)" }
}

/// What one request answered, body collected.
public struct SourceAnswer: Sendable {
    public var status: Int
    public var headers: HTTPHeaders
    public var body: Data

    public init(status: Int, headers: HTTPHeaders = HTTPHeaders(), body: Data = Data()) {
        self.status = status
        self.headers = headers
        self.body = body
    }
}

extension HTTPClient {
    /// Sends `request` and collects at most `maxBodyBytes` of its body, all within `deadline`; past it the request
    /// is cancelled (its connection closed) and `RequestDeadlineExceeded` is thrown. The head alone is bounded by
    /// `deadline` through AsyncHTTPClient, whose own error (connection refused, timeout) then names the cause; the
    /// whole request gets a quarter of a second more. A body over the limit throws `NIOTooManyBytesError`.
    /// Cancellation of the caller cancels the request too. `logger` is AsyncHTTPClient's request logger.
    public func collect(
        _ request: HTTPClientRequest, deadline: Duration, maxBodyBytes: Int, logger: Logger?
    ) async throws -> SourceAnswer {
        let millis = max(1, Int64(deadline / .milliseconds(1)))
        let (outcome, cutOff) = await DeadlineAlarm.race(until: .now.advanced(by: deadline + .milliseconds(250))) {
            let response = try await self.execute(request, timeout: .milliseconds(millis), logger: logger)
            let buffer = try await response.body.collect(upTo: maxBodyBytes)
            return SourceAnswer(status: Int(response.status.code), headers: response.headers, body: Data(buffer.readableBytesView))
        }
        if cutOff { throw RequestDeadlineExceeded(limit: deadline) }
        return try outcome.get()
    }
}
