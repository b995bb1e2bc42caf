/// The wait between attempts after transient failures: exponential, full jitter. Pure arithmetic, tested on its own.
public enum Backoff {
    /// Ceiling of the wait after `failures` failed attempts (1-based): `base * 2^(failures-1)`, capped by `max`.
    public static func ceiling(failures: Int, base: Duration, max cap: Duration) -> Duration {
        let exponent = Swift.min(Swift.max(failures - 1, 0), 30)
        let seconds = base.fractionalSeconds * Double(1 << exponent)
        return .seconds(Swift.min(seconds, cap.fractionalSeconds))
    }

    /// Full jitter: a uniform wait in `0...ceiling`; `unit` is a number in 0...1 (clamped).
    public static func jittered(_ ceiling: Duration, unit: Double) -> Duration {
        let unit = unit.isNaN ? 0 : Swift.min(Swift.max(unit, 0), 1)
        return .seconds(ceiling.fractionalSeconds * unit)
    }

    /// The wait after `failures` failures: `jittered(ceiling(...), unit: random 0...1)`.
    public static func wait(failures: Int, base: Duration, max cap: Duration) -> Duration {
        jittered(ceiling(failures: failures, base: base, max: cap), unit: Double.random(in: 0...1))
    }
}

extension Duration {
    /// The duration in (fractional) seconds.
    var fractionalSeconds: Double {
        let parts = components
        return Double(parts.seconds) + Double(parts.attoseconds) / 1e18
    }
}
