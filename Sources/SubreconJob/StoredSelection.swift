import Foundation
import SubreconCore
import SubreconPorts

/// The candidate selection of a run, stored with it so `--resume` asks for exactly the same candidates.
package struct StoredSelection: Codable {
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
    /// The app's request budgets: `--revenuecat-rps`, and each store's `--<store>-rps` by origin; nil in selections
    /// stored before they were. (`appStoreRPS` is read from selections stored before `storeRPS` was.)
    var revenueCatRPS: Double?
    /// `--revenuecat-v2-rps`; nil in selections stored before it was.
    var revenueCatV2RPS: Double?
    var storeRPS: [String: Double]?
    var appStoreRPS: Double?
    /// `--sweep-days`; nil in selections stored before it was (then 0: no sweep candidates that run did not have).
    var sweepDays: Int?
    /// `--sweep-free-days`; nil in selections stored before it was (then 0).
    var sweepFreeDays: Int?
    /// `--refund-review-count` / `--refund-review-days`; nil in selections stored before they were.
    var refundReviewCount: Int?
    var refundReviewDays: Int?

    package init(_ options: RunOptions) {
        sweepDays = options.sweepDays
        sweepFreeDays = options.sweepFreeDays
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
        revenueCatV2RPS = options.revenueCatV2RequestsPerSecond
        storeRPS = Dictionary(uniqueKeysWithValues: options.requestsPerSecond.map { ($0.key.rawValue, $0.value) })
        refundReviewCount = options.refundReviewCount
        refundReviewDays = options.refundReviewDays
    }

    package func encoded() throws -> Data {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .millisecondsSince1970
        encoder.outputFormatting = [.sortedKeys]
        return try encoder.encode(self)
    }

    package static func decode(_ data: Data) throws -> StoredSelection {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .millisecondsSince1970
        return try decoder.decode(StoredSelection.self, from: data)
    }

    /// Applies the stored selection to `options`, budgets included (report folder, concurrency and the like stay the
    /// caller's).
    package func apply(to options: inout RunOptions) throws {
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
        if let revenueCatV2RPS { options.revenueCatV2RequestsPerSecond = revenueCatV2RPS }
        if let appStoreRPS { options.requestsPerSecond[.appStore] = appStoreRPS }
        for (name, rate) in storeRPS ?? [:] {
            if let origin = FactOrigin(rawValue: name) { options.requestsPerSecond[origin] = rate }
        }
        options.sweepDays = sweepDays ?? 0
        options.sweepFreeDays = sweepFreeDays ?? 0
        if let refundReviewCount { options.refundReviewCount = refundReviewCount }
        if let refundReviewDays { options.refundReviewDays = refundReviewDays }
    }
}
