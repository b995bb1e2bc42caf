import Foundation
import SourceHTTP
import Testing

@Suite("429 waits: saturating parse of untrusted numbers and dates, capped waits, a time-bounded chain")
struct RequestedWaitTests {
    static let cap = Duration.seconds(60)

    @Test(
        "numbers in header and body text parse saturating, never trapping",
        arguments: [
            ("0", 0.0), ("5", 5), ("  5 ", 5), ("\t7\t", 7), ("1.5", 1.5), (".5", 0.5), ("5.", 5), ("-3", -3), ("+2", 2),
            ("1e19", 1e19), ("1E3", 1000), ("2e-3", 0.002), ("1e400", .infinity), ("-1e400", -.infinity), ("1e-400", 0),
            ("inf", .infinity), ("INF", .infinity), ("Infinity", .infinity), ("-inf", -.infinity), ("+inf", .infinity),
            ("99999999999999999999999999999999", 1e32), ("9223372036854775808", 9_223_372_036_854_775_808),
        ] as [(String, Double)])
    func numbers(text: String, expected: Double) {
        #expect(WaitText.number(text) == expected)
    }

    @Test(
        "text that is no decimal number is nil",
        arguments: [
            "", " ", "nan", "NaN", "-nan", "0x10", "0x1p3", "1e", "e5", ".", "-", "5s", "5 5", "1,5", "١٢",
            "Wed, 21 Oct 2015 07:28:00 GMT", "infinit", String(repeating: "9", count: 5000),
        ])
    func notNumbers(text: String) {
        #expect(WaitText.number(text) == nil)
    }

    @Test("HTTP-dates in all three RFC 9110 forms parse; nonsense is nil")
    func httpDates() throws {
        let expected = Date(timeIntervalSince1970: 784_111_777)  // Sun, 06 Nov 1994 08:49:37 GMT
        #expect(WaitText.httpDate("Sun, 06 Nov 1994 08:49:37 GMT") == expected)
        #expect(WaitText.httpDate("Sunday, 06-Nov-94 08:49:37 GMT") == expected)
        #expect(WaitText.httpDate("Sun Nov  6 08:49:37 1994") == expected)
        #expect(WaitText.httpDate("Fri, 31 Dec 9999 23:59:59 GMT") != nil)
        for bad in [
            "", "5", "Sun, 31 Feb 2026 08:49:37 GMT", "Sun, 06 Nov 1994 25:49:37 GMT", "Sun, 06 Nov 1994 08:49:37 PST",
            "Sun, 06 Foo 1994 08:49:37 GMT", "Sun, 06 Nov 99999999999999999999 08:49:37 GMT", "Sun, 06 Nov 1969 08:49:37 GMT",
            "Xyz, 06 Nov 1994 08:49:37 GMT", String(repeating: "Sun, ", count: 100),
        ] {
            #expect(WaitText.httpDate(bad) == nil, "\(bad)")
        }
    }

    @Test(
        "a delay in seconds is a wait up to the cap, too long above it, unspecified when NaN or negative",
        arguments: [
            (0.0, RequestedWait.wait(.zero)), (1.5, .wait(.milliseconds(1500))), (60, .wait(.seconds(60))),
            (60.000001, .tooLong(seconds: 60.000001)), (1e19, .tooLong(seconds: 1e19)), (.infinity, .tooLong(seconds: .infinity)),
            (.nan, .unspecified), (-1, .unspecified), (-.infinity, .unspecified),
            (.greatestFiniteMagnitude, .tooLong(seconds: .greatestFiniteMagnitude)),
        ] as [(Double, RequestedWait)])
    func seconds(value: Double, expected: RequestedWait) {
        #expect(RequestedWait.seconds(value, cap: Self.cap) == expected)
    }

    @Test("milliseconds and absolute instants are judged against the same cap")
    func millisecondsAndInstants() {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let nowMS = 1_800_000_000_000.0
        #expect(RequestedWait.milliseconds(250, cap: Self.cap) == .wait(.milliseconds(250)))
        #expect(RequestedWait.milliseconds(0.4, cap: Self.cap) == .wait(.microseconds(400)))
        #expect(RequestedWait.milliseconds(1e19, cap: Self.cap) == .tooLong(seconds: 1e16))
        #expect(RequestedWait.milliseconds(-5, cap: Self.cap) == .unspecified)
        // Apple: absolute Unix time in ms.
        #expect(RequestedWait.untilUnixMilliseconds(nowMS + 2_000, now: now, cap: Self.cap) == .wait(.seconds(2)))
        #expect(RequestedWait.untilUnixMilliseconds(nowMS - 5_000, now: now, cap: Self.cap) == .wait(.zero), "past: no wait")
        #expect(RequestedWait.untilUnixMilliseconds(0, now: now, cap: Self.cap) == .wait(.zero))
        #expect(RequestedWait.untilUnixMilliseconds(-.infinity, now: now, cap: Self.cap) == .wait(.zero))
        #expect(RequestedWait.untilUnixMilliseconds(nowMS + 3_600_000, now: now, cap: Self.cap) == .tooLong(seconds: 3600))
        #expect(RequestedWait.untilUnixMilliseconds(.infinity, now: now, cap: Self.cap) == .tooLong(seconds: .infinity))
        #expect(RequestedWait.untilUnixMilliseconds(1e300, now: now, cap: Self.cap) != .unspecified)
        #expect(RequestedWait.untilUnixMilliseconds(.nan, now: now, cap: Self.cap) == .unspecified)
        #expect(RequestedWait.until(now.addingTimeInterval(30), now: now, cap: Self.cap) == .wait(.seconds(30)))
        #expect(RequestedWait.until(.distantFuture, now: now, cap: Self.cap) != .unspecified)
        #expect(RequestedWait.until(.distantPast, now: now, cap: Self.cap) == .wait(.zero))
    }

    @Test("the operator text says how long was asked and the cap, for finite and unbounded waits")
    func descriptions() {
        #expect(RequestedWait.tooLongDescription(seconds: 3600, cap: .seconds(60)) == "asked to wait 3600 s, more than the 60 s cap")
        #expect(RequestedWait.tooLongDescription(seconds: 1e16, cap: .seconds(60)) == "asked to wait 1e+16 s, more than the 60 s cap")
        #expect(RequestedWait.tooLongDescription(seconds: .infinity, cap: .seconds(60)).contains("unbounded"))
    }

    @Test("a 429 chain waits what was asked (at least the floor), falls back to its own backoff, and stops at its budget")
    func chain() {
        var chain = RateLimitChain(budget: .seconds(1), minimumWait: .milliseconds(50))
        let own: (Int) -> Duration = { .milliseconds(100 * $0) }
        #expect(chain.next(.wait(.milliseconds(300)), ownBackoff: own) == .wait(.milliseconds(300)))
        #expect(chain.next(.wait(.zero), ownBackoff: own) == .wait(.milliseconds(50)), "never a hot loop")
        #expect(chain.next(.unspecified, ownBackoff: own) == .wait(.milliseconds(300)), "own backoff after the 3rd 429")
        #expect(chain.next(.wait(.milliseconds(350)), ownBackoff: own) == .wait(.milliseconds(350)))
        #expect(chain.waited == .seconds(1))
        #expect(chain.next(.wait(.milliseconds(1)), ownBackoff: own) == .budgetSpent)
        var other = RateLimitChain(budget: .seconds(300))
        #expect(other.next(.tooLong(seconds: .infinity), ownBackoff: own) == .tooLong(seconds: .infinity))
        #expect(other.answers == 1 && other.waited == .zero)
    }

    @Test("many 429s within the budget never fail: the chain is bounded by time, not by a count")
    func manyAnswers() {
        var chain = RateLimitChain(budget: .seconds(300))
        for _ in 0..<1000 {
            #expect(chain.next(.wait(.milliseconds(100)), ownBackoff: { _ in .zero }) == .wait(.milliseconds(100)))
        }
        #expect(chain.answers == 1000)
    }
}
