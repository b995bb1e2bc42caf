import Foundation

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

    /// What a 429 asks for: body `backoff_ms` first, else `Retry-After` in seconds (a value above 300 is read as
    /// milliseconds, as some RevenueCat documents and SDKs do), capped by `cap`. Nil when neither says anything usable.
    static func rateLimitWait(backoffMS: Int?, retryAfter: String?, cap: Duration) -> Duration? {
        var wait: Duration?
        if let backoffMS, backoffMS >= 0 {
            wait = .milliseconds(backoffMS)
        } else if let retryAfter, let value = Double(retryAfter.trimmingCharacters(in: .whitespaces)), value >= 0 {
            wait = value > 300 ? .milliseconds(Int64(value)) : .seconds(value)
        }
        guard let wait else { return nil }
        return Swift.min(wait, cap)
    }
}

extension Duration {
    /// The duration in (fractional) seconds.
    var seconds: Double {
        let parts = components
        return Double(parts.seconds) + Double(parts.attoseconds) / 1e18
    }
}
