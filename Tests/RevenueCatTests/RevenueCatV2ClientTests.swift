import AsyncHTTPClient
import Foundation
import Logging
import RevenueCat
import SourceHTTP
import StoreSimulator
import SubreconTestSupport
import Testing

/// The v2 client over real loopback HTTP to the simulator: 200 and 404 `resource_missing` are the only answers; every
/// other one (401, 403, 429 past its bounds, 5xx, a malformed body, a wrong project) is an error, never "no customer";
/// and no v2 read creates a customer.
@Suite("RevenueCat API v2 client")
struct RevenueCatV2ClientTests {
    static let v2Key = "sk_v2_LoopbackSecret77"
    static let project = "proj1ab2c3d4"

    struct V2Loopback {
        let simulator: RevenueCatSimulator
        let client: RevenueCatV2Client
        let observer: RecordingObserver
        let gate: RecordingGate
    }

    static func run(
        key: String = v2Key, project: String = project, maxAttempts: Int = 3, max429Wait: Duration = .seconds(2),
        _ body: (V2Loopback) async throws -> Void
    ) async throws {
        let simulator = RevenueCatSimulator(apiKey: Loopback.apiKey)
        await simulator.setV2(apiKey: v2Key, projectID: Self.project)
        try await withLoopback(routes: [simulator]) { server, http in
            let configuration = RevenueCatV2Configuration(
                baseURL: server.baseURL, apiKey: key, projectID: project,
                requestPolicy: SourceRequestPolicy(
                    requestTimeout: .seconds(5), maxBodyBytes: RevenueCatV2Configuration.defaultMaxBodyBytes, maxAttempts: maxAttempts,
                    baseBackoff: .milliseconds(5), maxBackoff: .milliseconds(20), maxRateLimitWait: max429Wait,
                    rateLimitBudget: .seconds(10)))
            let observer = RecordingObserver()
            let gate = RecordingGate()
            let client = RevenueCatV2Client(
                httpClient: http, configuration: configuration, logger: Logger(label: "test.revenuecat.v2"), observer: observer,
                gate: gate)
            try await body(V2Loopback(simulator: simulator, client: client, observer: observer, gate: gate))
        }
    }

    static func error(_ body: () async throws -> RevenueCatV2Existence) async -> RevenueCatError? {
        do {
            _ = try await body()
            return nil
        } catch {
            return error as? RevenueCatError
        }
    }

    @Test("an unknown id is 404 resource_missing: missing, and nothing is created; a known one exists; ids are URL-encoded")
    func existence() async throws {
        try await Self.run { l in
            let odd = "$RCAnonymousID:ab/c d?é"
            await l.simulator.setSubscriber(SimulatedSubscriber(firstSeen: Date(timeIntervalSince1970: 1_700_000_000)), for: odd)
            let answers = [
                try await l.client.existence(of: odd), try await l.client.existence(of: "never-seen"),
                try await l.client.existence(of: "never-seen/either"),
            ]
            #expect(answers == [.exists, .missing, .missing])
            let counters = await l.simulator.counters()
            #expect(counters.customersCreated == 0 && counters.totalRequests == 0 && counters.v2Requests == 3)
            #expect(await l.simulator.subscriber("never-seen") == nil, "a v2 read creates nothing")
            #expect(l.observer.entries.allSatisfy { $0.source == RevenueCatV2Client.sourceName })
            #expect(l.gate.acquireCount == 3, "every v2 request passes v2's own gate")
        }
    }

    @Test("401 (a wrong key, or v1's) is an error naming the status, never missing; the key is not in the text")
    func unauthorized() async throws {
        try await Self.run(key: "sk_wrong_SECRET_v2") { l in
            let error = try #require(await Self.error { try await l.client.existence(of: "u1") })
            #expect(error.description.hasPrefix("HTTP 401 (code authentication_error)"))
            #expect(!error.description.contains("sk_wrong_SECRET_v2"))
        }
    }

    @Test("403 authorization_error (the key lacks customer_information:customers:read) is an error")
    func forbidden() async throws {
        try await Self.run { l in
            await l.simulator.setV2(apiKey: Self.v2Key, projectID: Self.project, permissions: [])
            let error = try #require(await Self.error { try await l.client.existence(of: "u1") })
            #expect(error.description.hasPrefix("HTTP 403 (code authorization_error)"))
        }
    }

    @Test("a wrong project id is an error, never a customer that does not exist")
    func wrongProject() async throws {
        try await Self.run(project: "proj_other") { l in
            let error = try #require(await Self.error { try await l.client.existence(of: "u1") })
            #expect(error.description.hasPrefix("HTTP 404 (code resource_missing)"))
        }
    }

    @Test("429 waits backoff_ms (then Retry-After seconds) through v2's gate and then answers")
    func rateLimited() async throws {
        try await Self.run { l in
            await l.simulator.setV2Fault(.rateLimited(backoffMS: 120, retryAfter: "9"), for: "u1")
            await l.simulator.setV2Fault(.rateLimited(backoffMS: nil, retryAfter: "1"), for: "u1")
            let started = ContinuousClock.now
            let answer = try await l.client.existence(of: "u1")
            #expect(answer == .missing)
            #expect(ContinuousClock.now - started >= .milliseconds(1100), "120 ms from backoff_ms, then 1 s from Retry-After")
            #expect(l.observer.statuses == [429, 429, 404])
            #expect(l.gate.backOffDurations.count == 2)
        }
    }

    @Test("a 429 asking longer than the bounded wait is an error for tonight, not a sleep that long")
    func rateLimitTooLong() async throws {
        try await Self.run(max429Wait: .milliseconds(200)) { l in
            await l.simulator.setV2Fault(.rateLimited(backoffMS: 3_600_000, retryAfter: nil), for: "u1")
            let error = try #require(await Self.error { try await l.client.existence(of: "u1") })
            guard case .rateLimitWaitTooLong = error else {
                Issue.record("expected rateLimitWaitTooLong, got \(error)")
                return
            }
        }
    }

    @Test("5xx is retried up to the attempts, then an error")
    func serverErrors() async throws {
        try await Self.run(maxAttempts: 2) { l in
            for _ in 0..<3 { await l.simulator.setV2Fault(.status(503), for: "u1") }
            let error = try #require(await Self.error { try await l.client.existence(of: "u1") })
            #expect(error.description.hasPrefix("HTTP 503"))
            #expect(l.observer.statuses == [503, 503])
        }
    }

    @Test(
        "a body that is not the documented shape is an error: malformed 200, a 404 without resource_missing, a 200 error object",
        arguments: [
            RevenueCatFault.malformedJSON,
            .raw(status: 404, headers: [:], body: Data("Not Found".utf8)),
            .raw(status: 404, headers: [:], body: Data(#"{"object":"error","type":"parameter_error","message":"bad id"}"#.utf8)),
            .raw(status: 200, headers: [:], body: Data(#"{"object":"error","type":"resource_missing"}"#.utf8)),
            .raw(status: 400, headers: [:], body: Data(#"{"object":"error","type":"parameter_error"}"#.utf8)),
            .raw(status: 423, headers: [:], body: Data(#"{"object":"error","type":"resource_locked_error"}"#.utf8)),
        ])
    func notTheDocumentedShape(_ fault: RevenueCatFault) async throws {
        try await Self.run { l in
            await l.simulator.setV2Fault(fault, for: "u1")
            #expect(await Self.error { try await l.client.existence(of: "u1") } != nil)
        }
    }

    @Test("doctor: a working key holds; a wrong key, a missing permission and a wrong project are each named")
    func credentialCheck() async throws {
        try await Self.run { l in
            let check = await l.client.credentialCheck()
            #expect(check.outcome == .holds, "\(check)")
            #expect(await l.simulator.counters().customersCreated == 0)
            await l.simulator.setV2(apiKey: Self.v2Key, projectID: Self.project, permissions: [])
            let forbidden = await l.client.credentialCheck()
            #expect(forbidden.outcome == .misconfigured)
            #expect(forbidden.text.contains("customer_information:customers:read") && forbidden.text.contains("another project"))
        }
        try await Self.run(key: "sk_wrong_SECRET_v2") { l in
            let check = await l.client.credentialCheck()
            #expect(check.outcome == .misconfigured && check.text.hasPrefix("REVENUECAT_V2_API_KEY is not a key RevenueCat takes"))
            #expect(!check.text.contains("sk_wrong_SECRET_v2"))
        }
        try await Self.run(project: "proj_other") { l in
            let check = await l.client.credentialCheck()
            #expect(check.outcome == .misconfigured && check.text.hasPrefix("REVENUECAT_PROJECT_ID (proj_other) names no project"))
        }
    }
}
