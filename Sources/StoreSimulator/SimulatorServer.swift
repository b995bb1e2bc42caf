import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix

/// One HTTP request as a simulator route sees it.
public struct SimulatorRequest: Sendable {
    public var method: String
    /// The path without the query string, still percent-encoded as sent.
    public var path: String
    /// Query parameters, percent-decoded; a repeated name keeps its last value here (all of them in `queryValues`).
    public var query: [String: String]
    /// Every value of each query parameter, in the order sent (`expand[]=a&expand[]=b`).
    public var queryValues: [String: [String]] = [:]
    /// Header names lower-cased; the last value wins.
    public var headers: [String: String]
    public var body: Data

    public init(method: String, path: String, query: [String: String] = [:], headers: [String: String] = [:], body: Data = Data()) {
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.body = body
    }

    /// The path split on `/` with each segment percent-decoded (an encoded `/` inside a segment stays inside it).
    public var pathSegments: [String] {
        path.split(separator: "/", omittingEmptySubsequences: true).map { String($0).removingPercentEncoding ?? String($0) }
    }
}

/// What a route answers.
public struct SimulatorResponse: Sendable {
    public var status: Int
    public var headers: [String: String]
    public var body: Data
    /// Simulated latency before the answer is written.
    public var delay: Duration
    /// When set, the body is written one byte at a time with this pause between bytes (a trickling peer).
    public var trickle: Duration?

    public init(
        status: Int, headers: [String: String] = [:], body: Data = Data(), delay: Duration = .zero, trickle: Duration? = nil
    ) {
        self.status = status
        self.headers = headers
        self.body = body
        self.delay = delay
        self.trickle = trickle
    }

    public static func json(_ status: Int, _ body: Data, delay: Duration = .zero) -> SimulatorResponse {
        SimulatorResponse(status: status, headers: ["content-type": "application/json"], body: body, delay: delay)
    }

    public static func json<T: Encodable>(_ status: Int, encoding value: T, delay: Duration = .zero) -> SimulatorResponse {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return .json(status, (try? encoder.encode(value)) ?? Data("{}".utf8), delay: delay)
    }
}

/// A set of endpoints (RevenueCat, App Store Server API, ...). Returns nil for requests that are not its own.
public protocol SimulatorRoute: Sendable {
    func handle(_ request: SimulatorRequest) async -> SimulatorResponse?
}

/// A plain HTTP/1.1 server on loopback that hands every request to its routes in order.
/// Used by `subrecon demo`, the tests and the benchmark: real sockets, real wire formats.
public final class SimulatorServer: Sendable {
    public let port: Int
    public var baseURL: String { "http://127.0.0.1:\(port)" }

    private let serverChannel: any Channel
    private let acceptTask: Task<Void, Never>

    private init(port: Int, serverChannel: any Channel, acceptTask: Task<Void, Never>) {
        self.port = port
        self.serverChannel = serverChannel
        self.acceptTask = acceptTask
    }

    /// Binds 127.0.0.1 on `port` (0 = any free port) and starts serving.
    public static func start(
        routes: [any SimulatorRoute], port: Int = 0, group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) async throws -> SimulatorServer {
        let server = try await ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .serverChannelOption(.backlog, value: 512)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .bind(host: "127.0.0.1", port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                    return try NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>(
                        wrappingChannelSynchronously: channel)
                }
            }
        let boundPort = server.channel.localAddress?.port ?? port
        let channel = server.channel
        let task = Task<Void, Never> {
            _ = try? await withThrowingDiscardingTaskGroup { group in
                try await server.executeThenClose { connections in
                    for try await connection in connections {
                        group.addTask { await Self.serve(connection, routes: routes) }
                    }
                }
            }
        }
        return SimulatorServer(port: boundPort, serverChannel: channel, acceptTask: task)
    }

    /// Stops accepting and waits for the accept loop to end.
    public func shutdown() async {
        try? await serverChannel.close()
        // Keep-alive connections of clients still open would hold the accept loop; end them too.
        acceptTask.cancel()
        await acceptTask.value
    }

    private static func serve(
        _ connection: NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>, routes: [any SimulatorRoute]
    ) async {
        do {
            try await connection.executeThenClose { inbound, outbound in
                try await exchange(inbound: inbound, outbound: outbound, routes: routes)
            }
        } catch {
            // The peer went away; nothing to answer.
        }
    }

    private static func exchange(
        inbound: NIOAsyncChannelInboundStream<HTTPServerRequestPart>,
        outbound: NIOAsyncChannelOutboundWriter<HTTPServerResponsePart>, routes: [any SimulatorRoute]
    ) async throws {
        var head: HTTPRequestHead?
        var body = ByteBuffer()
        for try await part in inbound {
            switch part {
            case .head(let requestHead):
                head = requestHead
                body.clear()
            case .body(var chunk):
                body.writeBuffer(&chunk)
            case .end:
                guard let requestHead = head else { continue }
                let request = makeRequest(requestHead, body: body)
                var response = SimulatorResponse(status: 404, body: Data(#"{"message":"not found"}"#.utf8))
                for route in routes {
                    if let answer = await route.handle(request) {
                        response = answer
                        break
                    }
                }
                if response.delay > .zero { try? await Task.sleep(for: response.delay) }
                var headers = HTTPHeaders()
                for (name, value) in response.headers { headers.replaceOrAdd(name: name, value: value) }
                headers.replaceOrAdd(name: "content-length", value: String(response.body.count))
                let keepAlive = requestHead.isKeepAlive
                if !keepAlive { headers.replaceOrAdd(name: "connection", value: "close") }
                try await outbound.write(
                    .head(HTTPResponseHead(version: requestHead.version, status: .init(statusCode: response.status), headers: headers)))
                if let pause = response.trickle {
                    for byte in response.body {
                        try await outbound.write(.body(.byteBuffer(ByteBuffer(bytes: [byte]))))
                        try await Task.sleep(for: pause)
                    }
                } else {
                    try await outbound.write(.body(.byteBuffer(ByteBuffer(bytes: response.body))))
                }
                try await outbound.write(.end(nil))
                if !keepAlive { return }
            }
        }
    }

    private static func makeRequest(_ head: HTTPRequestHead, body: ByteBuffer) -> SimulatorRequest {
        let parts = head.uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        var query: [String: String] = [:]
        var values: [String: [String]] = [:]
        if parts.count == 2 {
            for pair in parts[1].split(separator: "&") {
                let kv = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                let key = String(kv[0]).removingPercentEncoding ?? String(kv[0])
                let value = kv.count > 1 ? (String(kv[1]).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? "") : ""
                query[key] = value
                values[key, default: []].append(value)
            }
        }
        var headers: [String: String] = [:]
        for (name, value) in head.headers { headers[name.lowercased()] = value }
        var request = SimulatorRequest(
            method: head.method.rawValue, path: String(parts.first ?? ""), query: query, headers: headers,
            body: Data(body.readableBytesView))
        request.queryValues = values
        return request
    }
}
