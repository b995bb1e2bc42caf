import Foundation
import SourceHTTP
import StoreSimulator
import SubreconCore
import SubreconTestSupport
import Testing

@testable import AppStore

@Suite("App Store 429s: Retry-After read saturating, capped, and not counted as attempts", .serialized)
struct AppStoreRateLimitTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)
    static let nowMS = 1_800_000_000_000
    static let cap = Duration.seconds(60)

    static func wait(_ value: String?) -> RequestedWait {
        AppStoreClient.requestedWait(retryAfter: value, now: now, cap: cap)
    }

    @Test(
        "Retry-After (absolute Unix ms) of any text never traps",
        arguments: [
            (String(nowMS + 2_000), RequestedWait.wait(.seconds(2))), ("  \(nowMS + 1_500) ", .wait(.milliseconds(1500))),
            (String(nowMS + 60_000), .wait(.seconds(60))), (String(nowMS + 3_600_000), .tooLong(seconds: 3600)),
            (String(nowMS - 5_000), .wait(.zero)), ("0", .wait(.zero)), ("-1", .wait(.zero)), ("-inf", .wait(.zero)),
            ("\(nowMS).5", .wait(.microseconds(500))), ("inf", .tooLong(seconds: .infinity)), ("nan", .unspecified), ("", .unspecified),
            ("soon", .unspecified), ("0x1p3", .unspecified), ("Fri, 15 Jan 2027 08:00:30 GMT", .wait(.seconds(30))),
            ("Wed, 21 Oct 2015 07:28:00 GMT", .wait(.zero)),
        ] as [(String, RequestedWait)])
    func retryAfter(value: String, expected: RequestedWait) {
        #expect(Self.wait(value) == expected)
    }

    @Test("absent Retry-After is unspecified; huge values are too long, not a trap")
    func extremes() {
        #expect(Self.wait(nil) == .unspecified)
        for huge in ["1e19", "99999999999999999999999", "9223372036854775807", "9223372036854775808", "1e308", "1e400"] {
            guard case .tooLong = Self.wait(huge) else {
                Issue.record("\(huge) must be too long")
                continue
            }
        }
    }

    static func rateLimitBody() -> Data { Data(#"{"errorCode": 4290000, "errorMessage": "Rate limit exceeded."}"#.utf8) }

    @Test(
        "a Retry-After far in the future or infinite is a fetch error at once: no sleep, no trap, one request",
        arguments: [(String(Int64(Date().timeIntervalSince1970 * 1000) + 3_600_000), "asked to wait"), ("inf", "unbounded wait")])
    func tooLong(retryAfter: String, says: String) async throws {
        let harness = try await AppStoreHarness(scenarios: [AppStoreClientEndToEndTests.scenario("801", status: 1, expiresIn: 86_400)])
        await harness.simulator.setFault(
            .raw(status: 429, headers: ["Retry-After": retryAfter], body: Self.rateLimitBody(), times: 1), for: "801")
        let error = try #require(await harness.client.subscriptionFacts(transactionID: "801").failure)
        await harness.stop()
        #expect(error.kind == .fetch)
        #expect(error.message.contains("rate limited") && error.message.contains(says), "\(error.message)")
        #expect(error.message.contains("60 s cap"))
        #expect(harness.sleeper.waits.isEmpty)
        #expect(harness.observer.statuses == [429])
    }

    @Test("more 429s than maxAttempts (3) still end in verified facts: 429 is flow control, not failure")
    func manyRateLimits() async throws {
        let harness = try await AppStoreHarness(scenarios: [AppStoreClientEndToEndTests.scenario("802", status: 1, expiresIn: 86_400)])
        await harness.simulator.setFault(.rateLimited(after: .milliseconds(200), times: 5), for: "802")
        let facts = try await harness.client.subscriptionFacts(transactionID: "802").get()
        await harness.stop()
        #expect(facts.count == 1)
        #expect(harness.observer.statuses == [429, 429, 429, 429, 429, 200])
        #expect(harness.sleeper.waits.count == 5)
        #expect(harness.sleeper.waits.allSatisfy { $0 >= .milliseconds(50) && $0 <= .milliseconds(201) }, "\(harness.sleeper.waits)")
    }

    @Test("unreadable Retry-After values fall back to the client's own backoff and the lookup succeeds")
    func unreadable() async throws {
        let harness = try await AppStoreHarness(scenarios: [AppStoreClientEndToEndTests.scenario("803", status: 1, expiresIn: 86_400)])
        await harness.simulator.setFault(
            .raw(status: 429, headers: ["Retry-After": "nan"], body: Data("{".utf8), times: 4), for: "803")
        let facts = try await harness.client.subscriptionFacts(transactionID: "803").get()
        await harness.stop()
        #expect(facts.count == 1)
        #expect(harness.sleeper.waits.count == 4)
        #expect(harness.sleeper.waits.allSatisfy { $0 >= .milliseconds(50) && $0 <= .seconds(5) })
    }
}
