import Foundation
import StoreSimulator
import SubreconCore
import SubreconJob
import SubreconPorts
import SubreconReports
import SubreconTestSupport
import SubreconTestWorld
import Testing

/// An empty identifier is no identifier (docs/CONTRACT.md, Database; Drift kinds `linked_purchase`): a row whose
/// `iap_original_transaction_id` is `''` or whitespace holds no App Store purchase, so a purchase its store names it
/// the buyer of is linked to it (never `ownership_conflict`), end to end.
@Suite("Blank identifiers end to end", .serialized, .timeLimit(.minutes(3)))
struct BlankIdentifierJobTests {
    static let buyers = ["6a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d", "7b2c3d4e-5f6a-4b7c-9d8e-0f1a2b3c4d5e"]

    @Test(
        "a row holding '' or spaces in Apple's column is linked to the purchase Apple names it the buyer of", arguments: JobWorld.backends)
    func blankAppleIDIsLinked(_ backend: WorldBackend) async throws {
        try await JobWorld.with(backend, apple: true, revenueCat: false) { h in
            let users = [("b-empty", "", "8401"), ("b-spaces", "  \t", "8402")]
            for (n, (id, blank, otid)) in users.enumerated() {
                var row = h.row(id, tier: 0, "none", end: nil)
                row.productID = nil
                row.source = nil
                row.originalTransactionID = blank
                row.accountToken = Self.buyers[n]
                try await h.db.insertUsers([row])
                await h.appStore.setScenario(AppleWorld.active(otid, account: Self.buyers[n]))
                var subscribed = AppleHistoryNotification(type: "SUBSCRIBED", originalTransactionID: otid, sentAt: JobWorld.day(-1))
                subscribed.appAccountToken = Self.buyers[n]
                await h.history.add(subscribed)
            }

            let result = try await h.run { $0.maxDowngradeRatio = 1 }
            #expect(result.exitStatus == .ok)
            let rows = try h.report(result)
            for (id, _, otid) in users {
                let row = try #require(rows[id])
                #expect(row.action == "restore" && row.applied, "\(row)")
                #expect(row.drift.contains("linked_purchase") && !row.drift.contains("ownership_conflict"), "\(row.drift)")
                #expect(row.candidateReason == ["linked_purchase"])
                let after = try #require(try await h.user(id))
                #expect(after.currentTier == 1 && after.originalTransactionID == otid)
            }
            #expect(result.summary.feeds?["app_store"]?.linked == 2)
        }
    }
}
