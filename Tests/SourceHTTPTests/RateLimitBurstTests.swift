import AsyncHTTPClient
import Foundation
import Logging
import SourceHTTP
import StoreSimulator
import SubreconCore
import Testing

/// A burst of `429 Retry-After: 60` from every lookup in flight is a source asking for a pause, not a source down
/// (docs/CONTRACT.md "Hostile answers and bounded work"): the lookups wait, are asked again and get their answers.
/// Time runs `scale` times fast: the production window of 60 s is 60 s / `scale` of real time (3 s: a loaded machine
/// still sends the burst well within it), and so is each wait.
@Suite("SourceTransport: a burst of 429 Retry-After: 60 pauses the source, never ends it", .timeLimit(.minutes(1)))
struct RateLimitBurstTests {
    static let scale: Int64 = 20

    /// The run's source health as the job keeps it (`SourceHealthBoard`): every attempt recorded at its instant, on a
    /// clock `speed` times fast; refused only once down.
    final class FastHealth: RequestObserver, @unchecked Sendable {
        private let lock = NSLock()
        private let origin = ContinuousClock.now
        private var health = SourceHealth(window: SourceHealth.defaultWindow)

        private let speed: Int64

        init(speed: Int64 = RateLimitBurstTests.scale) { self.speed = speed }

        private var now: Duration { (ContinuousClock.now - origin) * speed }

        func requestFinished(source: String, status: Int?, retried: Bool) {
            let now = now
            lock.withLock { _ = health.record(SourceHealth.outcome(status: status), status: status, at: now) }
        }
        func refusal(source: String) -> String? { lock.withLock { health.isDown ? "\(source) is down" : nil } }
        func refusal(source: String, afterWaiting wait: Duration) -> String? { refusal(source: source) }
        var isDown: Bool { lock.withLock { health.isDown } }
    }

    @Test("16 lookups in flight each get 429 Retry-After: 60 a moment apart: all wait, are asked again and answered")
    func burstOfMinuteWaits() async throws {
        let lookups = 16
        let limited = SimulatorResponse(status: 429, headers: ["Retry-After": "60"])
        try await TransportHarness.with(Array(repeating: limited, count: lookups)) { h in
            let health = FastHealth()
            let transport = SourceTransport(
                source: "revenuecat", httpClient: h.http,
                policy: TransportHarness.policy(requestTimeout: .seconds(60), rateLimitBudget: .seconds(300)),
                observer: health, gate: h.gate, sleep: { try await Task.sleep(for: $0 / Self.scale) })
            let results = await withTaskGroup(of: Result<SourceDelivery<String>, SourceRequestFailure>.self) { group in
                for _ in 0..<lookups {
                    group.addTask {
                        await transport.send(h.request, logger: Logger(label: "test.burst")) { classifyProbe($0) }
                    }
                }
                return await group.reduce(into: []) { $0.append($1) }
            }
            for result in results {
                guard case .success(let delivery) = result else {
                    Issue.record("expected the answer after the pause, got \(result)")
                    continue
                }
                #expect(delivery.value == "ok")
            }
            #expect(!health.isDown, "a burst of 429s asking for a minute is a pause, not a minute of failures")
            #expect(await h.route.count == 2 * lookups, "each lookup asked twice: once limited, once answered")
        }
    }

    @Test("a 429 asking for more than the cap still ends that lookup for tonight (the cap's rule), and the source is not down")
    func beyondTheCap() async throws {
        let limited = SimulatorResponse(status: 429, headers: ["Retry-After": "3600"])
        try await TransportHarness.with([limited, limited]) { h in
            let health = FastHealth(speed: 1)  // no wait is slept: real time
            let transport = SourceTransport(
                source: "revenuecat", httpClient: h.http, policy: TransportHarness.policy(maxRateLimitWait: .seconds(60)),
                observer: health, gate: h.gate, sleep: { try await Task.sleep(for: $0 / Self.scale) })
            for _ in 0..<2 {
                let result = await transport.send(h.request, logger: Logger(label: "test.burst")) { classifyProbe($0) }
                guard case .failure(.rateLimitWaitTooLong(let seconds, _, _, _)) = result else {
                    Issue.record("expected the wait refused as over the cap, got \(result)")
                    return
                }
                #expect(seconds == 3600)
            }
            #expect(!health.isDown, "two refused waits a moment apart are no minute of failures")
            let answered = await transport.send(h.request, logger: Logger(label: "test.burst")) { classifyProbe($0) }
            guard case .success = answered else {
                Issue.record("the source is asked again and answers, got \(answered)")
                return
            }
        }
    }
}
