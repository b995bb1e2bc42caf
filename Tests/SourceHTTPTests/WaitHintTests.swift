import Foundation
import SourceHTTP
import Testing

@Suite("429 waits in RevenueCat's forms (backoff_ms, Retry-After)")
struct WaitHintTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    static func wait(_ backoffMS: Double?, _ retryAfter: String?) -> RequestedWait {
        WaitHint.rateLimitWait(backoffMS: backoffMS, retryAfter: retryAfter, now: now, cap: .seconds(60))
    }

    @Test("a 429 wait prefers backoff_ms, reads Retry-After as seconds, large values as ms, or an HTTP-date")
    func rateLimitWait() {
        #expect(Self.wait(1500, "9") == .wait(.milliseconds(1500)))
        #expect(Self.wait(nil, "9") == .wait(.seconds(9)))
        #expect(Self.wait(nil, "2500") == .wait(.milliseconds(2500)))
        #expect(Self.wait(nil, "Fri, 15 Jan 2027 08:00:30 GMT") == .wait(.seconds(30)))  // now + 30 s
        #expect(Self.wait(nil, "Wed, 21 Oct 2015 07:28:00 GMT") == .wait(.zero), "a date already past")
        #expect(Self.wait(nil, nil) == .unspecified)
    }

    @Test(
        "backoff_ms of any value never traps: zero, fractional, negative, NaN, huge, infinite",
        arguments: [
            (0.0, RequestedWait.wait(.zero)), (0.5, .wait(.microseconds(500))), (250.75, .wait(.microseconds(250_750))),
            (60_000, .wait(.seconds(60))), (60_001, .tooLong(seconds: 60.001)), (900_000, .tooLong(seconds: 900)),
            (1e19, .tooLong(seconds: 1e16)), (.infinity, .tooLong(seconds: .infinity)), (-1, .unspecified),
            (-.infinity, .unspecified), (.nan, .unspecified), (Double(Int64.max), .tooLong(seconds: Double(Int64.max) / 1000)),
        ] as [(Double, RequestedWait)])
    func backoffValues(backoffMS: Double, expected: RequestedWait) {
        #expect(Self.wait(backoffMS, nil) == expected)
    }

    @Test(
        "Retry-After of any text never traps",
        arguments: [
            ("0", RequestedWait.wait(.zero)), ("  5 ", .wait(.seconds(5))), ("1.5", .wait(.milliseconds(1500))),
            ("300", .tooLong(seconds: 300)), ("301", .wait(.milliseconds(301))), ("120", .tooLong(seconds: 120)),
            ("inf", .tooLong(seconds: .infinity)), ("-inf", .unspecified), ("nan", .unspecified), ("", .unspecified),
            ("-5", .unspecified), ("1e19", .tooLong(seconds: 1e16)),
            ("99999999999999999999999999999", .tooLong(seconds: 1e29 / 1000)), ("soon", .unspecified), ("0x1p3", .unspecified),
        ] as [(String, RequestedWait)])
    func retryAfterValues(retryAfter: String, expected: RequestedWait) {
        #expect(Self.wait(nil, retryAfter) == expected)
    }

    @Test("an HTTP-date far ahead in Retry-After is too long, not a sleep until then")
    func farDate() {
        guard case .tooLong(let seconds) = Self.wait(nil, "Fri, 31 Dec 9999 23:59:59 GMT") else {
            Issue.record("expected tooLong")
            return
        }
        #expect(seconds > 2e11)
    }

    @Test("an unusable backoff_ms falls through to Retry-After; a usable one wins even when Retry-After is hostile")
    func precedence() {
        #expect(Self.wait(.nan, "3") == .wait(.seconds(3)))
        #expect(Self.wait(-10, "inf") == .tooLong(seconds: .infinity))
        #expect(Self.wait(20, "inf") == .wait(.milliseconds(20)))
        #expect(Self.wait(1e19, "1") == .tooLong(seconds: 1e16))
    }
}
