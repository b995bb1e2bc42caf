import Foundation
import SubreconCore
import SubreconDatabase

/// The candidate selection of a run, stored with it so `--resume` asks for exactly the same candidates.
struct StoredSelection: Codable {
    var mode: String
    var asOf: Date
    var lookbackDays: Int
    var userIDs: [String]?
    var endAfter: Date?
    var endBefore: Date?
    var shardIndex: Int
    var shardCount: Int
    var limit: Int?
    var maxDowngradeRatio: Double
    var environment: String
    /// The app's request budgets (`--revenuecat-rps`, `--app-store-rps`); nil in selections stored before they were.
    var revenueCatRPS: Double?
    var appStoreRPS: Double?
    /// `--google-play-rps`; nil in selections stored before it was.
    var googlePlayRPS: Double?
    /// `--sweep-days`; nil in selections stored before it was (then 0: no sweep candidates that run did not have).
    var sweepDays: Int?
    /// `--stripe-rps`; nil in selections stored before it was.
    var stripeRPS: Double?
    /// `--refund-review-count` / `--refund-review-days`; nil in selections stored before they were.
    var refundReviewCount: Int?
    var refundReviewDays: Int?

    init(_ options: RunOptions) {
        sweepDays = options.sweepDays
        mode = options.mode.rawValue
        asOf = options.asOf
        lookbackDays = options.lookbackDays
        userIDs = options.userIDs
        endAfter = options.endAfter
        endBefore = options.endBefore
        shardIndex = options.shard.index
        shardCount = options.shard.count
        limit = options.limit
        maxDowngradeRatio = options.maxDowngradeRatio
        environment = options.environment.rawValue
        revenueCatRPS = options.revenueCatRequestsPerSecond
        appStoreRPS = options.appStoreRequestsPerSecond
        googlePlayRPS = options.googlePlayRequestsPerSecond
        stripeRPS = options.stripeRequestsPerSecond
        refundReviewCount = options.refundReviewCount
        refundReviewDays = options.refundReviewDays
    }

    func encoded() throws -> Data {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .millisecondsSince1970
        encoder.outputFormatting = [.sortedKeys]
        return try encoder.encode(self)
    }

    static func decode(_ data: Data) throws -> StoredSelection {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .millisecondsSince1970
        return try decoder.decode(StoredSelection.self, from: data)
    }

    /// Applies the stored selection to `options`, budgets included (report folder, concurrency and the like stay the
    /// caller's).
    func apply(to options: inout RunOptions) throws {
        options.mode = CandidateQuery.Mode(rawValue: mode) ?? .nightly
        options.asOf = asOf
        options.lookbackDays = lookbackDays
        options.userIDs = userIDs
        options.endAfter = endAfter
        options.endBefore = endBefore
        options.shard = try ShardSpec.stored(index: shardIndex, count: shardCount)
        options.limit = limit
        options.maxDowngradeRatio = maxDowngradeRatio
        options.environment = StoreEnvironment(rawValue: environment) ?? .production
        if let revenueCatRPS { options.revenueCatRequestsPerSecond = revenueCatRPS }
        if let appStoreRPS { options.appStoreRequestsPerSecond = appStoreRPS }
        if let googlePlayRPS { options.googlePlayRequestsPerSecond = googlePlayRPS }
        options.sweepDays = sweepDays ?? 0
        if let stripeRPS { options.stripeRequestsPerSecond = stripeRPS }
        if let refundReviewCount { options.refundReviewCount = refundReviewCount }
        if let refundReviewDays { options.refundReviewDays = refundReviewDays }
    }
}
