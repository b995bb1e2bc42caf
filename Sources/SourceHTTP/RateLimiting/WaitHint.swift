import Foundation

/// The wait a 429 answer asks for in RevenueCat's forms (a body's `backoff_ms`, or `Retry-After`): pure, tested on
/// its own (the backoff between attempts is `Backoff`; the pacing the shared `SharedRateLimiter`).
public enum WaitHint {
    /// What a 429 asks for, judged against `cap`: the body's `backoff_ms` first (milliseconds), else `Retry-After`:
    /// a number of seconds (a value above 300 is read as milliseconds, as some RevenueCat documents and SDKs do) or
    /// an HTTP-date (a wait until then). Anything unusable in one falls through to the other, then `.unspecified`.
    /// Never traps: `1e19`, `inf`, huge integers and dates far ahead are `.tooLong`.
    public static func rateLimitWait(backoffMS: Double?, retryAfter: String?, now: Date, cap: Duration) -> RequestedWait {
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
