import AsyncHTTPClient
import Foundation
import Logging
import SourceHTTP
import StoreSimulator
import SubreconCore
import Testing

/// A source that answers only `429` with a long `Retry-After` (a token endpoint, a feed) is paused for each wait and
/// asked again; it is declared down once its failures really span a whole minute (docs/CONTRACT.md "Hostile answers
/// and bounded work"), never because of the wait it asks for.
@Suite("SourceTransport: a long wait pauses the source; a minute of failures declares it down", .timeLimit(.minutes(1)))
struct SourceDownWaitTests {
    /// Health on a virtual clock the injected sleep advances: no test waits a real minute.
    final class VirtualHealth: RequestObserver, @unchecked Sendable {
        private let lock = NSLock()
        private var health = SourceHealth()
        private var now = Duration.zero
        private(set) var slept: [Duration] = []

        func advance(_ wait: Duration) {
            lock.withLock {
                now += wait
                slept.append(wait)
            }
        }
        func requestFinished(source: String, status: Int?, retried: Bool) {
            lock.withLock { _ = health.record(SourceHealth.outcome(status: status), status: status, at: now) }
        }
        func refusal(source: String) -> String? { lock.withLock { health.isDown ? "\(source) is down" : nil } }
        func refusal(source: String, afterWaiting wait: Duration) -> String? { refusal(source: source) }
        var elapsed: Duration { lock.withLock { now } }
    }

    @Test("only 429 Retry-After: 59: waited out twice, declared down by the third 429 (118 s of failures), never a fourth request")
    func longRetryAfter() async throws {
        let limited = SimulatorResponse(status: 429, headers: ["Retry-After": "59"])
        try await TransportHarness.with(Array(repeating: limited, count: 10)) { h in
            let health = VirtualHealth()
            let transport = SourceTransport(
                source: "probe", httpClient: h.http,
                policy: TransportHarness.policy(requestTimeout: .seconds(60), rateLimitBudget: .seconds(600)), observer: health,
                gate: h.gate, sleep: { health.advance($0) })
            let result = await transport.send(h.request, logger: Logger(label: "test.down-wait")) { classifyProbe($0) }
            guard case .failure(.sourceDown(let reason, _)) = result else {
                Issue.record("expected the source declared down, got \(result)")
                return
            }
            #expect(reason.contains("down"))
            #expect(await h.route.count == 3, "the 429 at 59 s is 59 s of failures: paused and asked again; the one at 118 s ends it")
            #expect(health.slept == [.seconds(59), .seconds(59)], "two waits of 59 s, not a third")
            #expect(health.elapsed == .seconds(118))
        }
    }

    @Test("one 429 asking 59 s, then an answer: the wait goes ahead (one failure and a wait is not a minute)")
    func oneLongWaitThenAnswer() async throws {
        try await TransportHarness.with([SimulatorResponse(status: 429, headers: ["Retry-After": "59"])]) { h in
            let health = VirtualHealth()
            let transport = SourceTransport(
                source: "probe", httpClient: h.http, policy: TransportHarness.policy(requestTimeout: .seconds(60)), observer: health,
                gate: h.gate,
                sleep: { health.advance($0) })
            let result = await transport.send(h.request, logger: Logger(label: "test.down-wait")) { classifyProbe($0) }
            guard case .success(let delivery) = result else {
                Issue.record("expected the answer after the wait, got \(result)")
                return
            }
            #expect(delivery.value == "ok")
            #expect(health.slept == [.seconds(59)])
        }
    }
}
