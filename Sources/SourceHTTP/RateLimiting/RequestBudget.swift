import Foundation

/// The `--<source>-rps` values are the whole app's budget per source (CONTRACT "Commands"): a `--shard I/N` run takes 1/N of
/// it, so N shard processes together stay within it.
public enum RequestBudget {
    /// This run's share of the app's `rate` (requests/s): `rate / N` for shard `I/N`; 0 (unlimited) stays 0.
    public static func perShard(_ rate: Double, shards: Int) -> Double {
        guard rate > 0, rate.isFinite else { return rate.isNaN ? 0 : max(rate, 0) }
        return rate / Double(max(shards, 1))
    }

    /// For the summary's source notes: "budget 12.5 req/s (1/4 of the app's 50 req/s, shard 1/4)".
    /// - Parameter shard: the shard as `I/N`, and `shards` its N.
    public static func describe(_ rate: Double, shard: String, shards: Int) -> String {
        let share = perShard(rate, shards: shards)
        guard share > 0 else { return "budget unlimited" }
        guard shards > 1 else { return "budget \(format(share)) req/s" }
        return "budget \(format(share)) req/s (1/\(shards) of the app's \(format(rate)) req/s, shard \(shard))"
    }

    private static func format(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(format: "%.3g", value)
    }
}
