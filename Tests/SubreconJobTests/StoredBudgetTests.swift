import Foundation
import SubreconCore
import SubreconPorts
import Testing

@testable import SubreconJob

@Suite("--resume keeps the original run's request budgets")
struct StoredBudgetTests {
    @Test("the stored selection carries --revenuecat-rps and --app-store-rps back to the resumed run")
    func roundTrip() throws {
        var original = RunOptions(asOf: Date(timeIntervalSince1970: 1_800_000_000), reportDirectory: URL(fileURLWithPath: "/tmp"))
        original.revenueCatRequestsPerSecond = 40
        original.requestsPerSecond[.appStore] = 30
        let stored = try StoredSelection.decode(try StoredSelection(original).encoded())
        var resumed = RunOptions(asOf: Date(), reportDirectory: URL(fileURLWithPath: "/tmp"))
        try stored.apply(to: &resumed)
        #expect(resumed.revenueCatRequestsPerSecond == 40)
        #expect(resumed.requestsPerSecond[.appStore] == 30)
    }

    @Test("a selection stored before budgets were leaves the resuming command's budgets")
    func olderSelection() throws {
        let json = #"""
            {"asOf": 1800000000000, "environment": "production", "lookbackDays": 60, "maxDowngradeRatio": 0.5,
             "mode": "nightly", "shardCount": 1, "shardIndex": 0}
            """#
        let stored = try StoredSelection.decode(Data(json.utf8))
        var resumed = RunOptions(asOf: Date(), reportDirectory: URL(fileURLWithPath: "/tmp"))
        resumed.revenueCatRequestsPerSecond = 7
        try stored.apply(to: &resumed)
        #expect(resumed.revenueCatRequestsPerSecond == 7)
        #expect(resumed.requestsPerSecond[.appStore] == nil)
    }

    @Test("every store's budget travels by origin; a selection stored with appStoreRPS (before storeRPS) still carries it")
    func storesByOrigin() throws {
        var original = RunOptions(asOf: Date(timeIntervalSince1970: 1_800_000_000), reportDirectory: URL(fileURLWithPath: "/tmp"))
        original.requestsPerSecond = [.googlePlay: 12, .stripe: 0, .appStore: 7]
        let stored = try StoredSelection.decode(try StoredSelection(original).encoded())
        var resumed = RunOptions(asOf: Date(), reportDirectory: URL(fileURLWithPath: "/tmp"))
        try stored.apply(to: &resumed)
        #expect(resumed.requestsPerSecond == [.googlePlay: 12, .stripe: 0, .appStore: 7])
        let legacy = #"""
            {"asOf": 1800000000000, "environment": "production", "lookbackDays": 60, "maxDowngradeRatio": 0.5,
             "mode": "nightly", "shardCount": 1, "shardIndex": 0, "appStoreRPS": 25, "storeRPS": {"no_such_store": 3}}
            """#
        var fromLegacy = RunOptions(asOf: Date(), reportDirectory: URL(fileURLWithPath: "/tmp"))
        try StoredSelection.decode(Data(legacy.utf8)).apply(to: &fromLegacy)
        #expect(fromLegacy.requestsPerSecond == [.appStore: 25], "an unknown origin is ignored")
    }
}
