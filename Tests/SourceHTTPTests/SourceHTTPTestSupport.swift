import AsyncHTTPClient
import Foundation
import Logging
import NIOHTTP1
import SourceHTTP
import StoreSimulator
import SubreconCore
import SubreconTestSupport

/// A route that answers `/probe` with a script of responses, then 200 "ok" for ever; it counts what it saw.
actor ScriptedRoute: SimulatorRoute {
    private var script: [SimulatorResponse]
    private(set) var requests: [SimulatorRequest] = []

    init(_ script: [SimulatorResponse]) { self.script = script }

    func handle(_ request: SimulatorRequest) async -> SimulatorResponse? {
        guard request.path == "/probe" else { return nil }
        requests.append(request)
        return script.isEmpty ? SimulatorResponse(status: 200, body: Data("ok".utf8)) : script.removeFirst()
    }

    var count: Int { requests.count }
}

/// Records what the transport asks of its gate; refuses when told to.
final class RecordingGate: RequestGate, @unchecked Sendable {
    struct Refused: Error {}
    private let lock = NSLock()
    private var acquired = 0
    private var backOffs: [Duration] = []
    let refuses: Bool

    init(refuses: Bool = false) { self.refuses = refuses }

    func acquire() async throws {
        if refuses { throw Refused() }
        lock.withLock { acquired += 1 }
    }
    func backOff(for duration: Duration) async { lock.withLock { backOffs.append(duration) } }
    var acquireCount: Int { lock.withLock { acquired } }
    var backOffDurations: [Duration] { lock.withLock { backOffs } }
}

/// Records the waits the transport asks for instead of sleeping.
final class RecordingSleeper: @unchecked Sendable {
    private let lock = NSLock()
    private var storage: [Duration] = []
    func sleep(_ duration: Duration) async throws { lock.withLock { storage.append(duration) } }
    var waits: [Duration] { lock.withLock { storage } }
}

/// Log records, for asserting that the caller's logger reaches AsyncHTTPClient.
final class LogRecorder: @unchecked Sendable {
    private let lock = NSLock()
    private var storage: [(message: String, metadata: Logger.Metadata)] = []
    func append(_ message: String, _ metadata: Logger.Metadata) { lock.withLock { storage.append((message, metadata)) } }
    var records: [(message: String, metadata: Logger.Metadata)] { lock.withLock { storage } }
}

struct RecordingLogHandler: LogHandler {
    let recorder: LogRecorder
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        recorder.append(event.message.description, metadata.merging(event.metadata ?? [:], uniquingKeysWith: { $1 }))
    }
}

/// A scripted route behind a real loopback server, and a transport talking to it over a real `HTTPClient`.
struct TransportHarness {
    let route: ScriptedRoute
    let url: String
    let http: HTTPClient
    let observer = RecordingObserver()
    let gate: RecordingGate
    let sleeper = RecordingSleeper()

    static func policy(
        requestTimeout: Duration = .seconds(30), maxBodyBytes: Int = 1 << 16, maxAttempts: Int = 3,
        maxRateLimitWait: Duration = .seconds(60), rateLimitBudget: Duration = .seconds(300)
    ) -> SourceRequestPolicy {
        SourceRequestPolicy(
            requestTimeout: requestTimeout, maxBodyBytes: maxBodyBytes, maxAttempts: maxAttempts,
            baseBackoff: .milliseconds(5), maxBackoff: .milliseconds(20), maxRateLimitWait: maxRateLimitWait,
            rateLimitBudget: rateLimitBudget)
    }

    /// - Parameter realSleep: sleep for real between attempts (cancellation tests) instead of recording waits.
    func transport(_ policy: SourceRequestPolicy = Self.policy(), realSleep: Bool = false) -> SourceTransport {
        let sleeper = self.sleeper
        let sleep: @Sendable (Duration) async throws -> Void
        if realSleep {
            sleep = { try await Task.sleep(for: $0) }
        } else {
            sleep = { try await sleeper.sleep($0) }
        }
        return SourceTransport(source: "probe", httpClient: http, policy: policy, observer: observer, gate: gate, sleep: sleep)
    }

    var request: HTTPClientRequest { HTTPClientRequest(url: url) }

    static func with(
        _ script: [SimulatorResponse], refusingGate: Bool = false, _ body: (TransportHarness) async throws -> Void
    ) async throws {
        let route = ScriptedRoute(script)
        try await withLoopback(routes: [route]) { server, http in
            try await body(
                TransportHarness(route: route, url: server.baseURL + "/probe", http: http, gate: RecordingGate(refuses: refusingGate)))
        }
    }
}

/// The classification a typical JSON source would write: 200 is the body, 429 reads `Retry-After` in seconds,
/// 5xx is transient, the rest fails.
func classifyProbe(_ answer: SourceAnswer, cap: Duration = .seconds(60)) -> AnswerClass<String> {
    switch answer.status {
    case 200: .success(String(decoding: answer.body, as: UTF8.self))
    case 429:
        .rateLimited(
            answer.headers.first(name: "retry-after").flatMap { Double($0) }.map { RequestedWait.seconds($0, cap: cap) } ?? .unspecified)
    case 500...599: .retry(problem: "HTTP \(answer.status)")
    default: .fail(reason: "HTTP \(answer.status)")
    }
}
