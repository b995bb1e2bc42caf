import Foundation
import SubreconCore

/// Which users a run looks at (CONTRACT "Which users a run asks about" and the `run` options), turned into SQL by the
/// database adapter (`CandidateQuery+SQL`).
public struct CandidateQuery: Sendable, Hashable {
    /// `nightly` is the candidate scan of CONTRACT "Which users a run asks about"; `backfill` is every user with a subscription row.
    public enum Mode: String, Sendable, Hashable, CaseIterable, Codable {
        case nightly
        case backfill
    }

    public var mode: Mode
    /// The instant T the nightly rules judge by.
    public var asOf: Date
    /// Nightly: lapsed users (`expired`, `canceled`, `refunded`) whose end date is at or after T minus this many days.
    public var lookbackDays: Int
    /// Restricts either mode to these ids (`--users-file`); nil = no restriction.
    public var userIDs: [String]?
    /// Only rows with `subscription_end_date >= endAfter` (either mode).
    public var endAfter: Date?
    /// Only rows with `subscription_end_date < endBefore` (either mode).
    public var endBefore: Date?
    public var shard: ShardSpec
    /// Nightly: the rolling sweep's period D in nights (`--sweep-days`; 0 = off). Tier holders whose sweep bucket
    /// (`ShardSpec.hash(of: "sweep:" + id) mod D`) equals the night's index join the candidates (CONTRACT "Which users a run asks about"): recorded
    /// once per run in `reconcile_run_candidates` when the run has `runCandidatesID` (one pass over `users` a night),
    /// else (a `--users-file` run, a job without feeds) tested inline on each page.
    public var sweepDays: Int = 0
    /// Nightly: the sweep of rows holding no tier (`--sweep-free-days`; 0 = off; CONTRACT "Which users a run asks about", "Whose purchase it is"): rows with
    /// `current_tier <= 0` whose bucket (`hash("sweep_free:" + id) mod D`, a hash of its own) equals the night's index
    /// (mod D) join the candidates, so a paying user the database never recorded is found within D nights.
    public var sweepFreeDays: Int = 0
    /// Nightly: the run whose recorded candidates (feeds and sweep, `reconcile_run_candidates`) join the scan.
    public var runCandidatesID: String?
    /// Nightly: users named by the feeds of a run that records nothing (a dry run), with the reasons their feeds gave,
    /// joining the scan.
    public var namedUsers: [String: [CandidateReason]]?

    public init(
        mode: Mode = .nightly, asOf: Date, lookbackDays: Int = 60, userIDs: [String]? = nil, endAfter: Date? = nil,
        endBefore: Date? = nil, shard: ShardSpec = .all, sweepDays: Int = 0, runCandidatesID: String? = nil,
        namedUsers: [String: [CandidateReason]]? = nil, sweepFreeDays: Int = 0
    ) {
        self.sweepFreeDays = max(0, sweepFreeDays)
        self.namedUsers = namedUsers
        self.sweepDays = max(0, sweepDays)
        self.runCandidatesID = runCandidatesID
        self.mode = mode
        self.asOf = asOf
        self.lookbackDays = lookbackDays
        self.userIDs = userIDs
        self.endAfter = endAfter
        self.endBefore = endBefore
        self.shard = shard
    }

    /// The sweep's night index: whole UTC days of `asOf` since 1970-01-01, mod `days` (CONTRACT "Which users a run asks about").
    public static func sweepNight(asOf: Date, days: Int) -> Int {
        guard days > 0 else { return 0 }
        let day = Int((asOf.timeIntervalSince1970 / 86_400).rounded(.down))
        return ((day % days) + days) % days
    }

    /// The rolling sweep's bucket of a user id, as the SQL computes it (`bucketSQL`): `hash("sweep:" + id) mod days`
    /// (0 when `days` is 0). A hash of its own, so the sweep's nights do not line up with `--shard` slices. The scan
    /// never calls it (PostgreSQL states each row's reasons); the demo seeds the user a night's sweep takes with it.
    public static func sweepBucket(of id: String, days: Int) -> Int { bucket(of: id, prefix: "sweep:", days: days) }

    /// The free-row sweep's bucket of a user id, as the SQL computes it: `hash("sweep_free:" + id) mod days`.
    public static func sweepFreeBucket(of id: String, days: Int) -> Int { bucket(of: id, prefix: "sweep_free:", days: days) }

    package static func bucket(of id: String, prefix: String, days: Int) -> Int {
        days > 0 ? Int(ShardSpec.hash(of: prefix + id) % UInt32(days)) : 0
    }

    /// A row's reasons from the rules, feeds and sweeps it met, with `users_file` when the run is restricted to a
    /// users file; sorted, each once.
    public func reasons(met: some Sequence<CandidateReason>) -> [CandidateReason] {
        var reasons = Set(met)
        if userIDs != nil { reasons.insert(.usersFile) }
        return reasons.sorted()
    }
}
