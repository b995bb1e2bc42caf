import Foundation
import StoreSimulator
import SubreconCore
import SubreconJob
import SubreconPorts
import SubreconReports
import SubreconTestSupport
import SubreconTestWorld
import Testing

/// Only Apple's token ignores case (CONTRACT "Whose purchase it is"): a Stripe `metadata.user_id` in another case,
/// even one shaped like a UUID, names another account, so a purchase no row holds is an orphan, never linked to a
/// user whose id differs in case. And an empty identifier in a row is none.
@Suite("Accounts compared the right way when linking", .serialized)
struct AccountCaseJobTests {
    static let uuid = "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d"

    @Test(
        "a Stripe subscription naming a user id in upper case (a UUID too) is an orphan listed in summary.json; the exact id links",
        arguments: JobWorld.backends)
    func stripeCase(_ backend: WorldBackend) async throws {
        try await StripeWorld.with(backend) { h, stripe in
            let lower = StripeWorld.row("o-case", tier: 0, "none", end: -400, customer: nil)
            let uuidRow = StripeWorld.row(Self.uuid, tier: 0, "none", end: -400, customer: nil)
            let exact = StripeWorld.row("o-exact", tier: 0, "none", end: -400, customer: nil)
            try await h.db.insertUsers([lower, uuidRow, exact])
            for (customer, account) in [("cus_upper", "O-CASE"), ("cus_uuid", Self.uuid.uppercased()), ("cus_exact", "o-exact")] {
                var subscription = StripeWorld.subscription("sub_\(customer)", "active", from: -1, to: 29)
                subscription.metadata = ["user_id": account]
                await stripe.setSubscriptions([subscription], forCustomer: customer)
            }
            let result = try await h.run { $0.maxDowngradeRatio = 1 }
            let rows = try h.report(result)
            #expect(rows["o-exact"]?.action == "restore" && rows["o-exact"]?.candidateReason == ["linked_purchase"])
            #expect(rows["o-case"] == nil && rows[Self.uuid] == nil, "never linked to an id in another case")
            #expect(try await h.user("o-case")?.identifiers[.stripe] == nil)
            #expect(try await h.user(Self.uuid)?.currentTier == 0)
            let csv = try String(contentsOf: result.folder.appendingPathComponent("orphans.csv"), encoding: .utf8)
                .components(separatedBy: "\r\n").filter { !$0.isEmpty }
            #expect(csv.count == 3, "\(csv)")
            let orphans = try #require(result.summary.orphans)
            #expect(orphans.count == 2 && orphans.items.map(\.identifier) == ["cus_upper", "cus_uuid"] && !orphans.truncated)
            #expect(orphans.items.allSatisfy { $0.store == "stripe" && $0.status == "active" && $0.productID == "prod_basic" })
        }
    }
}
