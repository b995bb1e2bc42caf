import AsyncHTTPClient
import Foundation
import Logging
import NIOHTTP1
import SourceHTTP
import StoreSimulator
import SubreconCore
import SubreconTestKit
import SubreconTestSupport
import Testing

@Suite("SourceTransport: one retry loop for every source, against a loopback server", .timeLimit(.minutes(2)))
struct SourceTransportTests {
    static let logger = Logger(label: "test.source-http")

    @Test("a 200 is a success after one attempt: gate asked once, observer told once")
    func success() async throws {
        try await TransportHarness.with([]) { h in
            let result = await h.transport().send(h.request, logger: Self.logger) { classifyProbe($0) }
            let delivery = try result.get()
            #expect(delivery.value == "ok" && delivery.attempts == 1)
            #expect(h.observer.statuses == [200] && h.observer.retried == [false])
            #expect(h.gate.acquireCount == 1 && h.gate.backOffDurations.isEmpty)
            #expect(h.sleeper.waits.isEmpty)
            #expect(await h.route.count == 1)
        }
    }

    @Test("a 5xx is retried after a backoff within the ceiling, and the next answer is used")
    func serverErrorThenSuccess() async throws {
        try await TransportHarness.with([SimulatorResponse(status: 503)]) { h in
            let delivery = try await h.transport().send(h.request, logger: Self.logger) { classifyProbe($0) }.get()
            #expect(delivery.value == "ok" && delivery.attempts == 2)
            #expect(h.observer.statuses == [503, 200] && h.observer.retried == [false, true])
            #expect(h.gate.acquireCount == 2)
            #expect(h.sleeper.waits.count == 1)
            #expect(h.sleeper.waits.allSatisfy { $0 >= .zero && $0 <= .milliseconds(5) }, "first backoff ceiling is the base")
        }
    }

    @Test("5xx on every attempt is exhausted after maxAttempts, naming the last problem")
    func serverErrorExhausted() async throws {
        try await TransportHarness.with(Array(repeating: SimulatorResponse(status: 502), count: 10)) { h in
            let result = await h.transport(TransportHarness.policy(maxAttempts: 3)).send(h.request, logger: Self.logger) {
                classifyProbe($0)
            }
            guard case .failure(.exhausted(.answer(let answer, let problem), let attempts)) = result else {
                Issue.record("expected exhausted, got \(result)")
                return
            }
            #expect(answer.status == 502 && problem == "HTTP 502" && attempts == 3)
            let failure = try #require(result.failure)
            #expect(failure.description == "gave up after 3 attempts: HTTP 502")
            #expect(await h.route.count == 3)
            #expect(h.sleeper.waits.count == 2, "a backoff between attempts, none after the last")
            #expect(h.observer.statuses == [502, 502, 502])
        }
    }

    @Test("a final answer (404) fails at once, not retried")
    func rejected() async throws {
        try await TransportHarness.with([SimulatorResponse(status: 404)]) { h in
            let result = await h.transport().send(h.request, logger: Self.logger) { classifyProbe($0) }
            guard case .failure(.rejected(let answer, let reason, 1)) = result else {
                Issue.record("expected rejected, got \(result)")
                return
            }
            #expect(answer.status == 404 && reason == "HTTP 404")
            #expect(await h.route.count == 1 && h.sleeper.waits.isEmpty)
        }
    }

    @Test("a 429 is waited out as asked, tells the gate, does not count as an attempt, then succeeds")
    func rateLimitedThenSuccess() async throws {
        let limited = SimulatorResponse(status: 429, headers: ["Retry-After": "0.2"])
        try await TransportHarness.with([limited, limited, limited]) { h in
            // maxAttempts 1: three 429s still end in an answer.
            let delivery = try await h.transport(TransportHarness.policy(maxAttempts: 1)).send(h.request, logger: Self.logger) {
                classifyProbe($0)
            }.get()
            #expect(delivery.value == "ok" && delivery.attempts == 4)
            #expect(h.sleeper.waits == Array(repeating: .milliseconds(200), count: 3))
            #expect(h.gate.backOffDurations == Array(repeating: .milliseconds(200), count: 3))
            #expect(h.observer.statuses == [429, 429, 429, 200])
        }
    }

    @Test("a 429 naming no usable wait uses the own backoff, raised to the 50 ms floor")
    func rateLimitedUnspecified() async throws {
        try await TransportHarness.with([SimulatorResponse(status: 429, headers: ["Retry-After": "soon"])]) { h in
            let delivery = try await h.transport().send(h.request, logger: Self.logger) { classifyProbe($0) }.get()
            #expect(delivery.attempts == 2)
            #expect(h.sleeper.waits == [.milliseconds(50)])
        }
    }

    @Test("a 429 asking longer than the cap fails at once naming the wait and the cap; the gate is told, nobody paused")
    func rateLimitTooLong() async throws {
        try await TransportHarness.with([SimulatorResponse(status: 429, headers: ["Retry-After": "3600"])]) { h in
            let result = await h.transport().send(h.request, logger: Self.logger) { classifyProbe($0) }
            guard case .failure(.rateLimitWaitTooLong(let seconds, let cap, let answer, 1)) = result else {
                Issue.record("expected rateLimitWaitTooLong, got \(result)")
                return
            }
            #expect(seconds == 3600 && cap == .seconds(60) && answer.status == 429)
            let message = try #require(result.failure).description
            #expect(
                message.contains("rate limited (HTTP 429)") && message.contains("asked to wait 3600 s, more than the 60 s cap"),
                "\(message)")
            #expect(h.sleeper.waits.isEmpty, "never a sleep that long")
            #expect(h.gate.backOffDurations == [.zero])
            #expect(await h.route.count == 1)
        }
    }

    @Test("429s until the lookup's wait budget is spent: given up saying so, after the waits that fit")
    func rateLimitBudgetSpent() async throws {
        let limited = SimulatorResponse(status: 429, headers: ["Retry-After": "1"])
        try await TransportHarness.with(Array(repeating: limited, count: 10)) { h in
            let policy = TransportHarness.policy(maxAttempts: 2, rateLimitBudget: .milliseconds(2500))
            let result = await h.transport(policy).send(h.request, logger: Self.logger) { classifyProbe($0) }
            guard case .failure(.rateLimitBudgetSpent(_, 3)) = result else {
                Issue.record("expected rateLimitBudgetSpent after 3 attempts, got \(result)")
                return
            }
            let failure = try #require(result.failure)
            #expect(failure.description.contains("wait budget ran out after 3 attempts"))
            #expect(h.sleeper.waits == [.seconds(1), .seconds(1)])
            #expect(h.gate.backOffDurations == [.seconds(1), .seconds(1), .zero])
            #expect(await h.route.count == 3)
        }
    }

    @Test("a body trickled a byte at a time cannot hold an attempt past the request timeout")
    func tricklingBody() async throws {
        let trickle = SimulatorResponse(status: 200, body: Data(repeating: UInt8(ascii: "x"), count: 200), trickle: .milliseconds(50))
        try await TransportHarness.with([trickle, trickle]) { h in
            let policy = TransportHarness.policy(requestTimeout: .milliseconds(300), maxAttempts: 2)
            let result = await h.transport(policy).send(h.request, logger: Self.logger) { classifyProbe($0) }
            guard case .failure(.exhausted(.timedOut, 2)) = result else {
                Issue.record("expected timed out twice, got \(result)")
                return
            }
            let failure = try #require(result.failure)
            #expect(failure.description == "gave up after 2 attempts: timed out")
            #expect(h.observer.statuses == [nil, nil])
        }
    }

    @Test("a body over the limit fails at once, not retried")
    func bodyTooLarge() async throws {
        let big = SimulatorResponse(status: 200, body: Data(repeating: UInt8(ascii: "x"), count: 4096))
        try await TransportHarness.with([big, big]) { h in
            let result = await h.transport(TransportHarness.policy(maxBodyBytes: 1024)).send(h.request, logger: Self.logger) {
                classifyProbe($0)
            }
            guard case .failure(.bodyTooLarge(1024, 1)) = result else {
                Issue.record("expected bodyTooLarge, got \(result)")
                return
            }
            let failure = try #require(result.failure)
            #expect(failure.description == "response body larger than 1024 bytes")
            #expect(await h.route.count == 1)
        }
    }

    @Test("nothing listening is a network error, retried, then exhausted")
    func connectionRefused() async throws {
        try await TransportHarness.with([]) { h in
            let transport = SourceTransport(
                source: "probe", httpClient: h.http, policy: TransportHarness.policy(requestTimeout: .seconds(2), maxAttempts: 2),
                observer: h.observer, sleep: { _ in })
            let result = await transport.send(HTTPClientRequest(url: "http://127.0.0.1:1/probe"), logger: Self.logger) {
                classifyProbe($0)
            }
            guard case .failure(.exhausted(let last, 2)) = result else {
                Issue.record("expected exhausted, got \(result)")
                return
            }
            #expect(last.description.hasPrefix("network error") || last.description == "timed out", "\(last)")
            #expect(h.observer.statuses == [nil, nil])
        }
    }

    @Test("cancelling the lookup while its answer is outstanding ends it as cancelled")
    func cancelledDuringRequest() async throws {
        try await TransportHarness.with([SimulatorResponse(status: 200, delay: .seconds(30))]) { h in
            let transport = h.transport(TransportHarness.policy(requestTimeout: .seconds(60)), realSleep: true)
            let request = h.request
            let lookup = Task { await transport.send(request, logger: Self.logger) { classifyProbe($0) } }
            guard try await TestPoll.until(seconds: 30, { await h.route.count > 0 }) else {
                lookup.cancel()
                Issue.record("the request never reached the server")
                return
            }
            lookup.cancel()
            let result = await lookup.value
            guard case .failure(.cancelled) = result else {
                Issue.record("expected cancelled, got \(result)")
                return
            }
            #expect(await h.route.count == 1, "no retry after cancellation")
            #expect(h.observer.statuses == [nil])
        }
    }

    @Test("cancelling the lookup during a 429 wait ends it as cancelled without asking again")
    func cancelledDuringWait() async throws {
        try await TransportHarness.with([SimulatorResponse(status: 429, headers: ["Retry-After": "30"])]) { h in
            let transport = h.transport(realSleep: true)
            let request = h.request
            let lookup = Task { await transport.send(request, logger: Self.logger) { classifyProbe($0) } }
            // Under load the first request can time out (a transient failure, no 429 wait): then say so and stop.
            guard try await TestPoll.until(seconds: 30, { !h.gate.backOffDurations.isEmpty }) else {
                lookup.cancel()
                Issue.record("no 429 wait began within 30 s")
                return
            }
            lookup.cancel()
            let result = await lookup.value
            guard case .failure(.cancelled) = result else {
                Issue.record("expected cancelled, got \(result)")
                return
            }
            #expect(await h.route.count == 1)
            #expect(h.gate.backOffDurations == [.seconds(30)])
        }
    }

    @Test("a gate that refuses ends the lookup before any request is sent")
    func gateRefuses() async throws {
        try await TransportHarness.with([], refusingGate: true) { h in
            let result = await h.transport().send(h.request, logger: Self.logger) { classifyProbe($0) }
            guard case .failure(.notPermitted) = result else {
                Issue.record("expected notPermitted, got \(result)")
                return
            }
            #expect(await h.route.count == 0 && h.observer.statuses.isEmpty)
        }
    }

    @Test("the request is built anew for every attempt; a build that throws ends the lookup")
    func requestPerAttempt() async throws {
        struct NoToken: Error {}
        try await TransportHarness.with([SimulatorResponse(status: 500), SimulatorResponse(status: 500)]) { h in
            let url = h.url
            let built = await h.transport().send(
                logger: Self.logger,
                request: { attempt in
                    var request = HTTPClientRequest(url: url)
                    request.headers.add(name: "X-Attempt", value: "\(attempt)")
                    return request
                },
                classify: { classifyProbe($0) })
            let delivery = try built.get()
            #expect(delivery.attempts == 3)
            #expect(await h.route.requests.map { $0.headers["x-attempt"] } == ["1", "2", "3"])

            let failed = await h.transport().send(logger: Self.logger, request: { _ in throw NoToken() }, classify: { classifyProbe($0) })
            guard case .failure(.requestNotBuilt) = failed else {
                Issue.record("expected requestNotBuilt, got \(failed)")
                return
            }
            #expect(await h.route.count == 3, "nothing sent for the failed build")
        }
    }

    @Test("the caller's logger reaches AsyncHTTPClient's request logging (execute(…, logger:))")
    func loggerThreaded() async throws {
        try await TransportHarness.with([SimulatorResponse(status: 503)]) { h in
            let recorder = LogRecorder()
            var logger = Logger(label: "test.source-http") { _ in RecordingLogHandler(recorder: recorder) }
            logger.logLevel = .trace
            logger[metadataKey: "user.id"] = "u-42"
            _ = try await h.transport().send(h.request, logger: logger) { classifyProbe($0) }.get()
            let records = recorder.records
            let ours = records.filter { $0.message == "source request failed, will be retried" }
            #expect(ours.count == 1)
            #expect(ours.first?.metadata["http.status"] == "503" && ours.first?.metadata["user.id"] == "u-42")
            // Records our code does not write, carrying our metadata: AsyncHTTPClient logged with our logger.
            let library = records.filter { !$0.message.hasPrefix("source request") && $0.metadata["user.id"] == "u-42" }
            #expect(!library.isEmpty, "\(records.map(\.message))")
        }
    }
}

@Suite("Backoff: exponential ceiling and full jitter")
struct BackoffTests {
    @Test("the backoff ceiling doubles per failure and stops at the maximum")
    func ceiling() {
        let base = Duration.milliseconds(500)
        #expect(Backoff.ceiling(failures: 1, base: base, max: .seconds(30)) == .milliseconds(500))
        #expect(Backoff.ceiling(failures: 2, base: base, max: .seconds(30)) == .seconds(1))
        #expect(Backoff.ceiling(failures: 4, base: base, max: .seconds(30)) == .seconds(4))
        #expect(Backoff.ceiling(failures: 12, base: base, max: .seconds(30)) == .seconds(30))
        #expect(Backoff.ceiling(failures: 500, base: base, max: .seconds(30)) == .seconds(30))
    }

    @Test("full jitter stays within zero and the ceiling")
    func jitter() {
        #expect(Backoff.jittered(.seconds(4), unit: 0) == .zero)
        #expect(Backoff.jittered(.seconds(4), unit: 0.5) == .seconds(2))
        #expect(Backoff.jittered(.seconds(4), unit: 1) == .seconds(4))
        #expect(Backoff.jittered(.seconds(4), unit: 7) == .seconds(4))
        #expect(Backoff.jittered(.seconds(4), unit: .nan) == .zero)
        for failures in 1...40 {
            let wait = Backoff.wait(failures: failures, base: .milliseconds(250), max: .seconds(30))
            #expect(wait >= .zero && wait <= .seconds(30))
        }
    }
}

extension Result {
    var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
