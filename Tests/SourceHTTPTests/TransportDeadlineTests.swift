import AsyncHTTPClient
import Foundation
import Logging
import SourceHTTP
import StoreSimulator
import SubreconCore
import Testing

/// No wait a source asks for outlives the lookup's deadline (`LookupDeadline`), and a source declared
/// down is not asked at all.
@Suite("SourceTransport: bounded by the lookup's deadline", .timeLimit(.minutes(1)))
struct TransportDeadlineTests {
    static let logger = Logger(label: "test.source-http.deadline")

    @Test("a 429 asking 59 s with 30 s left fails at once naming the wait and the time left; nothing slept, the gate still paused")
    func rateLimitPastDeadline() async throws {
        let limited = SimulatorResponse(status: 429, headers: ["Retry-After": "59"])
        try await TransportHarness.with([limited]) { h in
            // 30 s: ample for one loopback answer on a loaded machine, still well short of the 59 s asked.
            let result = await LookupDeadline.$instant.withValue(.now + .seconds(30)) {
                await h.transport(TransportHarness.policy(requestTimeout: .seconds(30))).send(h.request, logger: Self.logger) {
                    classifyProbe($0)
                }
            }
            guard case .failure(.beyondDeadline(let reason, 1)) = result else {
                Issue.record("expected beyondDeadline after one attempt, got \(result)")
                return
            }
            #expect(reason.contains("wait of 59 s") && reason.contains("s left of this lookup's deadline"), "\(reason)")
            #expect(h.sleeper.waits.isEmpty, "never a sleep past the deadline")
            #expect(h.gate.backOffDurations == [.seconds(59)], "the source's pause still holds for everybody")
            #expect(await h.route.count == 1)
        }
    }

    @Test("a backoff after a 5xx longer than the time left ends the lookup instead of sleeping")
    func backoffPastDeadline() async throws {
        try await TransportHarness.with([SimulatorResponse(status: 503)]) { h in
            // 10 s left: ample for one loopback answer on a loaded machine; a backoff drawn up to 1,000 s.
            let policy = SourceRequestPolicy(
                requestTimeout: .seconds(10), maxAttempts: 4, baseBackoff: .seconds(1_000), maxBackoff: .seconds(1_000))
            let result = await LookupDeadline.$instant.withValue(.now + .seconds(10)) {
                await h.transport(policy).send(h.request, logger: Self.logger) { classifyProbe($0) }
            }
            // Full jitter may draw a wait under the time left (then it is slept, recorded, and the next answer is 200).
            if case .failure(.beyondDeadline(let reason, 1)) = result {
                #expect(reason.contains("the backoff after HTTP 503"), "\(reason)")
                #expect(h.sleeper.waits.isEmpty)
            } else {
                #expect(h.sleeper.waits.allSatisfy { $0 <= .seconds(10) }, "\(result)")
            }
        }
    }

    @Test("an attempt is bounded by the time left, not only by the request timeout")
    func attemptBoundedByDeadline() async throws {
        // 200 bytes, one every 300 ms: a minute for the whole body, under each attempt's 90 s request timeout.
        let trickle = SimulatorResponse(status: 200, body: Data(repeating: UInt8(ascii: "x"), count: 200), trickle: .milliseconds(300))
        try await TransportHarness.with([trickle, trickle, trickle]) { h in
            let policy = TransportHarness.policy(requestTimeout: .seconds(90), maxAttempts: 3)
            let start = ContinuousClock.now
            let result = await LookupDeadline.$instant.withValue(.now + .milliseconds(500)) {
                await h.transport(policy, realSleep: true).send(h.request, logger: Self.logger) { classifyProbe($0) }
            }
            #expect(ContinuousClock.now - start < .seconds(30), "the 90 s request timeout did not hold it")
            #expect(result.failure != nil, "\(result)")
        }
    }

    @Test("a source the observer calls down is not asked: the lookup fails at once with its reason")
    func sourceDown() async throws {
        try await TransportHarness.with([]) { h in
            let observer = DownObserver()
            let transport = SourceTransport(source: "probe", httpClient: h.http, policy: TransportHarness.policy(), observer: observer)
            let result = await transport.send(h.request, logger: Self.logger) { classifyProbe($0) }
            guard case .failure(.sourceDown(let reason, 0)) = result else {
                Issue.record("expected sourceDown, got \(result)")
                return
            }
            #expect(reason == "probe was declared down")
            #expect(await h.route.count == 0)
        }
    }

    @Test("LookupDeadline.run cuts off work that would not end, and an inner deadline never outlives the outer one")
    func runCutsOff() async {
        let start = ContinuousClock.now
        let (value, cutOff) = await LookupDeadline.run(within: .milliseconds(200)) { () async -> Int in
            let inner = await LookupDeadline.run(within: .seconds(3600)) { () async -> Duration? in
                let left = LookupDeadline.remaining()
                try? await Task.sleep(for: .seconds(3600))
                return left
            }
            if let left = inner.value ?? nil {
                #expect(left <= .milliseconds(200), "the outer deadline is the nearer one")
            } else {
                Issue.record("the inner work saw no deadline")
            }
            return 7
        }
        // The inner deadline is the outer one, the same instant: whichever fires first ends the work, so on a loaded
        // machine the outer run may see the work end (7) just before its own deadline fires. Either way the work that
        // would sleep an hour ends at the deadline.
        #expect(value == 7, "cut off: \(cutOff)")
        #expect(ContinuousClock.now - start < .seconds(30), "cut off long before the hour it would sleep")
        let quick = await LookupDeadline.run(within: .seconds(10)) { 1 }
        #expect(quick.value == 1 && !quick.cutOff)
        #expect(LookupDeadline.instant == nil, "the deadline is scoped to the work")
    }
}

/// Says every source is down.
final class DownObserver: RequestObserver {
    func requestFinished(source: String, status: Int?, retried: Bool) {}
    func refusal(source: String) -> String? { "\(source) was declared down" }
}
