import Foundation
import SubreconCore
import SubreconPorts
import SubreconTestKit
import Testing

@testable import SubreconJob

/// A transfer's holders are every row naming the line, whatever its tier (docs/CONTRACT.md "Whose purchase it is"):
/// a row holding no tier, status `none`, no end date and the line's original transaction (a lost first webhook) is
/// `ownership_conflict`, untouched and listed, whether or not it was a candidate; its own sources' "active" never
/// restores it beside the owner. In memory: the job through its ports.
@Suite("A transfer reads every holder, whatever its tier", .timeLimit(.minutes(1)))
struct TransferHolderTests {
    static let line = "5100"

    /// A purchase of the transferred line, bought yesterday, renewing in 29 days.
    static var linePurchase: PurchaseFact {
        var purchase = subscription(purchased: -1, expires: 29)
        purchase.originalTransactionID = line
        return purchase
    }

    /// `o-owner` (free, expired) is listed the line by RevenueCat; `h-free` holds it with no tier at all and its own
    /// lookups say the line is active.
    static func world(_ body: (JobFixture) async throws -> Void) async throws {
        try await JobFixture.with([:]) { world in
            world.database.insert([
                UserRow(id: "o-owner", currentTier: 0, status: "expired", endDate: day(-9), source: "apple_iap"),
                UserRow(id: "h-free", currentTier: 0, status: "none", originalTransactionID: line),
            ])
            var owner = SourceFacts(revenueCatKnowsSubscriber: true, revenueCatPurchases: [linePurchase])
            owner.transfers = [LineTransfer(origin: .appStore, identifier: line, owner: "o-owner", holders: ["h-free"])]
            world.source.script("o-owner", .facts(owner))
            world.source.script("h-free", .facts(SourceFacts(revenueCatKnowsSubscriber: true, revenueCatPurchases: [linePurchase])))
            try await body(world)
        }
    }

    static func expectConflict(_ world: JobFixture, runID: String) throws {
        let entries = world.database.ledger(runID: runID)
        let holder = try #require(entries.first { $0.verdict.row.id == "h-free" }, "the holder is listed")
        #expect(holder.verdict.drift == [.ownershipConflict] && holder.verdict.action == .skipped)
        #expect(world.database.user("h-free")?.currentTier == 0, "one line, one paying row")
        #expect(world.database.audits(of: "h-free").isEmpty && world.database.intents(of: "h-free").isEmpty)
        #expect(world.database.user("o-owner")?.currentTier == 1, "the owner is restored")
        #expect(world.database.user("o-owner")?.originalTransactionID == line)
        let paying = world.database.users.filter { $0.currentTier > 0 && $0.originalTransactionID == line }
        #expect(paying.map(\.id) == ["o-owner"], "no line entitles two users")
    }

    @Test("a holder with no tier that was no candidate is read and listed as ownership_conflict")
    func notACandidate() async throws {
        try await Self.world { world in
            let result = try await world.run(world.options { $0.userIDs = ["o-owner"] }, runID: "run-transfer")
            #expect(result.exitStatus == .ok)
            #expect(!world.source.asked.contains("h-free"), "not a candidate: its sources were never asked")
            try Self.expectConflict(world, runID: "run-transfer")
        }
    }

    @Test("a holder with no tier that is a candidate too: its own 'active' does not restore it beside the owner")
    func alsoACandidate() async throws {
        try await Self.world { world in
            // The free sweep over every free row tonight (a period of one night): both rows are candidates.
            let result = try await world.run(world.options { $0.sweepFreeDays = 1 }, runID: "run-sweep")
            #expect(result.exitStatus == .ok)
            #expect(world.source.asked.contains("h-free"), "a candidate: its sources were asked")
            try Self.expectConflict(world, runID: "run-sweep")
        }
    }
}
