import Foundation
import StoreSimulator
import SubreconCore
import SubreconJob
import SubreconPorts
import SubreconReports
import SubreconTestSupport
import SubreconTestWorld
import Testing

/// A RevenueCat `TRANSFER` (CONTRACT "Whose purchase it is"): RevenueCat lists under B an App Store line A's row
/// names. B owns it: restored from the line, the original transaction written into B's row (A's identifier never
/// blocks B); A is `ownership_conflict`, untouched and listed, whichever of them the scan meets first, whether or not
/// Apple names a buyer, and on the nights after. Every backend, the loopback simulators.
@Suite("A RevenueCat transfer reaches its new owner", .serialized)
struct TransferJobTests {
    static let ownerToken = "2a9e0c1d-7a2b-4c3d-9e8f-00000000000b"

    /// Sets up one transfer of original transaction `original` from `holder` to `owner`.
    static func transfer(_ h: JobWorld, holder: String, owner: String, original: String, appleNamesOwner: Bool) async throws {
        var owned = h.row(owner, tier: 0, "expired", end: -5)
        if appleNamesOwner { owned.accountToken = Self.ownerToken }
        try await h.db.insertUsers([h.row(holder, tier: 1, "active", end: -1, txn: original), owned])
        var scenario = AppStoreScenario(
            originalTransactionID: original, productID: "premium_monthly", status: 1, purchaseDate: JobWorld.day(-1),
            expiresDate: JobWorld.day(29), price: 9990, currency: "USD")
        if appleNamesOwner { scenario.appAccountToken = Self.ownerToken.uppercased() }
        await h.appStore.setScenario(scenario)
        await h.revenueCat.setSubscriber(SimulatedSubscriber(firstSeen: JobWorld.day(-300), subscriptions: []), for: holder)
        await h.revenueCat.setSubscriber(
            SimulatedSubscriber(
                firstSeen: JobWorld.day(-300),
                subscriptions: [JobWorld.subscription("premium_monthly", purchased: -1, expires: 29, txn: original)]),
            for: owner)
    }

    @Test(
        "the owner is restored with the identifier written; the holder is ownership_conflict in either scan order; a rerun changes nothing",
        arguments: JobWorld.backends)
    func transfers(_ backend: WorldBackend) async throws {
        try await JobWorld.with(backend, apple: true) { h in
            // Holder before owner in id order, and after it; Apple naming the owner's account, and nobody.
            try await Self.transfer(h, holder: "t1-a", owner: "t1-b", original: "5100", appleNamesOwner: false)
            try await Self.transfer(h, holder: "t2-z", owner: "t2-b", original: "5200", appleNamesOwner: true)
            let first = try await h.run { $0.maxDowngradeRatio = 1 }
            let report = try h.report(first)
            for (owner, original) in [("t1-b", "5100"), ("t2-b", "5200")] {
                let row = try #require(try await h.user(owner))
                #expect(
                    row.currentTier == 1 && row.originalTransactionID == original, "\(owner): restored from the line, identifier written")
                #expect(report[owner]?.action == "restore" && report[owner]?.pushIntent == ["restored"], "\(owner)")
                #expect(try await h.auditRows(owner) == 1)
            }
            for holder in ["t1-a", "t2-z"] {
                let row = try #require(try await h.user(holder))
                #expect(row.currentTier == 1 && row.endDate == JobWorld.day(-1), "\(holder): untouched")
                #expect(report[holder]?.action == "skipped" && report[holder]?.drift == ["ownership_conflict"], "\(holder)")
                #expect(report[holder]?.error?.contains("revenuecat") == true, "\(report[holder]?.error ?? "")")
                let (audits, intents) = (try await h.auditRows(holder), try await h.intents(holder))
                #expect(audits == 0 && intents == 0, "\(holder)")
            }
            let second = try await h.run { $0.maxDowngradeRatio = 1 }
            let again = try h.report(second)
            #expect(again.values.allSatisfy { !$0.applied }, "a rerun changes nothing")
            for holder in ["t1-a", "t2-z"] {
                #expect(again[holder]?.drift == ["ownership_conflict"], "\(holder): still listed on the next night")
                #expect(try await h.user(holder)?.endDate == JobWorld.day(-1))
            }
        }
    }

    @Test(
        "a holder who is no candidate tonight is read and listed too; a dry run says the same and writes nothing",
        arguments: JobWorld.backends)
    func holderOutsideTheNight(_ backend: WorldBackend) async throws {
        try await JobWorld.with(backend, apple: true) { h in
            try await Self.transfer(h, holder: "t3-a", owner: "t3-b", original: "5300", appleNamesOwner: false)
            let dry = try await h.run {
                $0.dryRun = true
                $0.mode = .backfill
                $0.userIDs = ["t3-b"]
            }
            let dryReport = try h.report(dry)
            #expect(dryReport["t3-b"]?.action == "restore")
            #expect(dryReport["t3-a"]?.drift == ["ownership_conflict"], "the holder is listed though no candidate")
            #expect(try await h.user("t3-b")?.currentTier == 0, "a dry run writes nothing")
            let real = try await h.run {
                $0.mode = .backfill
                $0.userIDs = ["t3-b"]
                $0.maxDowngradeRatio = 1
            }
            let report = try h.report(real)
            #expect(report["t3-a"]?.drift == ["ownership_conflict"] && report["t3-a"]?.applied == false)
            #expect(try await h.user("t3-b")?.originalTransactionID == "5300")
            #expect(try await h.user("t3-a")?.currentTier == 1)
        }
    }
}
