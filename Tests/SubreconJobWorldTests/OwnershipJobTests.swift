import Foundation
import StoreSimulator
import SubreconCore
import SubreconJob
import SubreconPorts
import SubreconReports
import SubreconTestSupport
import SubreconTestWorld
import Testing

/// Whose purchase it is (CONTRACT "Whose purchase it is") end to end: real PostgreSQL, loopback simulators, real crypto.
@Suite(
    "Whose purchase it is: linking, orphans and ownership conflicts end to end", .serialized)
struct OwnershipJobTests {
    static let buyer = "5d6f0c1e-7a2b-4c3d-9e8f-0a1b2c3d4e5f"
    static let stranger = "0f0e0d0c-0b0a-4908-8706-050403020100"

    func summary(_ result: RunResult) throws -> RunSummary {
        try JSONDecoder().decode(RunSummary.self, from: Data(contentsOf: result.folder.appendingPathComponent("summary.json")))
    }

    func orphansCSV(_ result: RunResult) throws -> [String] {
        try String(contentsOf: result.folder.appendingPathComponent("orphans.csv"), encoding: .utf8)
            .split(separator: "\r\n").map(String.init)
    }

    @Test(
        "a lost first purchase is found by Apple's feed and linked through appAccountToken; one with no account is an orphan",
        arguments: JobWorld.backends)
    func appleFeedLinksAndLists(_ backend: WorldBackend) async throws {
        try await JobWorld.with(backend, apple: true, revenueCat: false) { h in
            // The first webhook was lost: the row holds no tier and no transaction id, only the app's account token.
            var lost = h.row("o-lost", tier: 0, "none", end: nil)
            lost.productID = nil
            lost.source = nil
            lost.accountToken = Self.buyer
            // Gave the purchase away (a transfer): Apple names another buyer; untouched, listed for a person.
            let gaveAway = h.row("o-gave-away", tier: 1, "active", end: -2, txn: "8003")
            try await h.db.insertUsers([lost, gaveAway])
            // The test's database handle never checked `users`, so it writes no account_token: set it as the app would.
            await h.appStore.setScenario(
                Self.active("8001", account: Self.buyer.uppercased()))
            await h.appStore.setScenario(Self.active("8003", account: Self.stranger))
            let sent = JobWorld.day(-1)
            var subscribed = AppleHistoryNotification(type: "SUBSCRIBED", originalTransactionID: "8001", sentAt: sent)
            subscribed.appAccountToken = Self.buyer.uppercased()
            await h.history.add(subscribed)
            await h.history.add(AppleHistoryNotification(type: "SUBSCRIBED", originalTransactionID: "8002", sentAt: sent))

            let result = try await h.run { $0.maxDowngradeRatio = 1 }
            let rows = try h.report(result)
            let linked = try #require(rows["o-lost"])
            #expect(linked.action == "restore")
            #expect(linked.candidateReason == ["linked_purchase"])
            #expect(linked.drift.contains("linked_purchase"))
            let after = try #require(try await h.user("o-lost"))
            #expect(after.currentTier == 1 && after.originalTransactionID == "8001")
            #expect(after.identifiers.isEmpty, "an Apple id goes only into Apple's column")
            let audit = try await h.db.count(.originalTransactionChanges(user: "o-lost", from: nil, to: "8001"))
            #expect(audit == 1, "the written identifier is audited like the tier")

            let conflict = try #require(rows["o-gave-away"])
            #expect(conflict.action == "skipped" && conflict.drift == ["ownership_conflict"])
            let untouched = try #require(try await h.user("o-gave-away"))
            #expect(untouched.currentTier == 1 && untouched.originalTransactionID == "8003")

            let csv = try orphansCSV(result)
            #expect(csv.count == 2, "a header and one orphan: \(csv)")
            #expect(csv.last?.hasPrefix("app_store,8002,premium_monthly,active,") == true)
            #expect(try summary(result).orphans?.count == 1)
            #expect(try summary(result).feeds?["app_store"]?.linked == 1)

            // The next night: nothing to change, the orphan is still listed and keeps its first night.
            let again = try await h.run { $0.maxDowngradeRatio = 1 }
            #expect(try h.report(again)["o-lost"] == nil || (try h.report(again)["o-lost"]?.action == "none"))
            let kept = try await h.db.count(.keptOrphans(identifier: "8002"))
            #expect(kept == 1)
        }
    }

    @Test("a resumed run reads no feed again and still lists the orphans its first attempt kept", arguments: JobWorld.backends)
    func resumedRunListsOrphans(_ backend: WorldBackend) async throws {
        try await JobWorld.with(backend, apple: true) { h in
            // One downgrade trips the valve; the night's feed finds one orphan.
            try await h.seed(h.row("o-down", tier: 1, "active", end: -2), JobWorld.subscription(expires: -2))
            await h.appStore.setScenario(Self.active("8102", account: nil))
            await h.history.add(AppleHistoryNotification(type: "SUBSCRIBED", originalTransactionID: "8102", sentAt: JobWorld.day(-1)))
            let tripped = try await h.run { $0.maxDowngradeRatio = 0.1 }
            #expect(tripped.exitStatus == .valveTripped)
            #expect(try orphansCSV(tripped).count == 2)
            let historyAsked = await h.history.requests()
            let accepted = try await h.db.run(
                environment: h.env, options: h.options { $0.acceptDowngrades = true }, logger: h.logger,
                resume: tripped.summary.runID)
            #expect(accepted.exitStatus == .ok && accepted.summary.applied == 1)
            #expect(await h.history.requests() == historyAsked, "the resumed run reads no feed again")
            let csv = try orphansCSV(accepted)
            #expect(csv.count == 2 && csv.last?.hasPrefix("app_store,8102,premium_monthly,active,") == true, "\(csv)")
            #expect(accepted.summary.orphans?.count == 1)
        }
    }

    @Test(
        "a newer App Store purchase than the row names grants the tier: its original transaction is written, audited",
        arguments: JobWorld.backends)
    func staleAppleIdentifier(_ backend: WorldBackend) async throws {
        try await JobWorld.with(backend, apple: true) { h in
            try await h.seed(
                h.row("o-stale", tier: 1, "active", end: -2, txn: "9001"), JobWorld.subscription(purchased: -2, expires: 28, txn: "9102"))
            await h.appStore.setScenario(
                AppStoreScenario(
                    originalTransactionID: "9001", transactionID: "9101", productID: "premium_monthly", status: 2,
                    purchaseDate: JobWorld.day(-32), expiresDate: JobWorld.day(-2)))
            await h.appStore.setScenario(
                AppStoreScenario(
                    originalTransactionID: "9002", transactionID: "9102", productID: "premium_monthly", status: 1,
                    purchaseDate: JobWorld.day(-2), expiresDate: JobWorld.day(28)))
            let result = try await h.run { $0.maxDowngradeRatio = 1 }
            let row = try #require(try h.report(result)["o-stale"])
            #expect(row.action == "extend" && row.drift == ["missed_renewal", "stale_identifier"])
            let after = try #require(try await h.user("o-stale"))
            #expect(after.originalTransactionID == "9002" && after.currentTier == 1 && after.endDate == JobWorld.day(28))
            let audited = try await h.db.count(.originalTransactionChanges(user: "o-stale", from: "9001", to: "9002"))
            #expect(audited == 1)
            #expect(try h.report(try await h.run { $0.maxDowngradeRatio = 1 })["o-stale"] == nil, "in sync: no longer a candidate")
        }
    }

    static func active(_ otid: String, account: String?) -> AppStoreScenario {
        var scenario = AppStoreScenario(
            originalTransactionID: otid, transactionID: otid + "1", productID: "premium_monthly", status: 1,
            purchaseDate: JobWorld.day(-1), expiresDate: JobWorld.day(29))
        scenario.appAccountToken = account
        return scenario
    }

    @Test(
        "a Stripe subscriber no row names is linked through metadata.user_id; a free row's live customer is a candidate",
        arguments: JobWorld.backends)
    func stripeInventoryLinks(_ backend: WorldBackend) async throws {
        try await StripeWorld.with(backend) { h, stripe in
            // The row never recorded its Stripe customer.
            let unnamed = StripeWorld.row("o-web", tier: 0, "none", end: -400, customer: nil)
            // The row names its customer but lost its tier: the inventory makes it a candidate (no CONTRACT "Which users a run asks about" rule does).
            let free = StripeWorld.row("o-free", tier: 0, "expired", end: -400, customer: "cus_free")
            // Holds another customer: linking would overwrite it.
            let other = StripeWorld.row("o-other", tier: 0, "expired", end: -400, customer: "cus_mine")
            try await h.db.insertUsers([unnamed, free, other])
            var web = StripeWorld.subscription("sub_web", "active", from: -1, to: 29)
            web.metadata = ["user_id": "o-web"]
            await stripe.setSubscriptions([web], forCustomer: "cus_web")
            await stripe.setSubscriptions([StripeWorld.subscription("sub_free", "active", from: -1, to: 29)], forCustomer: "cus_free")
            await stripe.setSubscriptions([], forCustomer: "cus_mine")
            await stripe.setSubscriptions(
                [StripeWorld.subscription("sub_theirs", "trialing", from: -1, to: 13)], forCustomer: "cus_theirs")
            await stripe.setCustomerMetadata(["user_id": "o-other"], forCustomer: "cus_theirs")
            await stripe.setSubscriptions(
                [StripeWorld.subscription("sub_nobody", "past_due", from: -1, to: 29)], forCustomer: "cus_nobody")

            let result = try await h.run { $0.maxDowngradeRatio = 1 }
            let rows = try h.report(result)
            #expect(rows["o-web"]?.action == "restore")
            #expect(rows["o-web"]?.candidateReason == ["linked_purchase"])
            #expect(try await h.user("o-web")?.identifiers[.stripe] == "cus_web")
            #expect(try await h.user("o-web")?.originalTransactionID == nil, "a Stripe id never goes into Apple's column")
            #expect(rows["o-free"]?.action == "restore")
            #expect(rows["o-free"]?.candidateReason == ["stripe_inventory"])
            #expect(rows["o-other"]?.drift == ["ownership_conflict"])
            #expect(try await h.user("o-other")?.identifiers[.stripe] == "cus_mine")
            let csv = try orphansCSV(result)
            #expect(csv.count == 2 && csv.last?.hasPrefix("stripe,cus_nobody,") == true, "\(csv)")
            let inventory = try #require(try summary(result).feeds?["stripe_inventory"])
            #expect(inventory.error == nil && inventory.linked == 2 && inventory.orphans == 1)
        }
    }
}
