import Foundation
import SubreconCore

/// The waits between attempts: pure arithmetic, tested on its own.
enum RetryPolicy {
    /// Ceiling of the wait after `failures` failed attempts (1-based): `base * 2^(failures-1)`, capped by `max`.
    static func ceiling(failures: Int, base: Duration, max cap: Duration) -> Duration {
        let exponent = Swift.min(Swift.max(failures - 1, 0), 30)
        let seconds = base.seconds * Double(1 << exponent)
        return .seconds(Swift.min(seconds, cap.seconds))
    }

    /// Full jitter: a uniform wait in `0...ceiling`; `unit` is a number in 0...1.
    static func jittered(_ ceiling: Duration, unit: Double) -> Duration {
        .seconds(ceiling.seconds * Swift.min(Swift.max(unit, 0), 1))
    }

    /// What a 429 asks for, judged against `cap`: the body's `backoff_ms` first (milliseconds), else `Retry-After`:
    /// a number of seconds (a value above 300 is read as milliseconds, as some RevenueCat documents and SDKs do) or
    /// an HTTP-date (a wait until then). Anything unusable in one falls through to the other, then `.unspecified`.
    /// Never traps: `1e19`, `inf`, huge integers and dates far ahead are `.tooLong`.
    static func rateLimitWait(backoffMS: Double?, retryAfter: String?, now: Date, cap: Duration) -> RequestedWait {
        if let backoffMS {
            let asked = RequestedWait.milliseconds(backoffMS, cap: cap)
            if asked != .unspecified { return asked }
        }
        guard let retryAfter else { return .unspecified }
        if let value = WaitText.number(retryAfter) {
            return value > 300 ? .milliseconds(value, cap: cap) : .seconds(value, cap: cap)
        }
        if let date = WaitText.httpDate(retryAfter) { return .until(date, now: now, cap: cap) }
        return .unspecified
    }
}

extension Duration {
    /// The duration in (fractional) seconds.
    var seconds: Double {
        let parts = components
        return Double(parts.seconds) + Double(parts.attoseconds) / 1e18
    }
}
