import Foundation
import StoreSimulator
import SubreconApp
import SubreconCore
import SubreconDatabase
import SubreconJob
import SubreconPorts
import SubreconReports
import SubreconTestSupport
import Testing

/// Black-box scenarios for "evidence is explicit" (issue: fail closed): the real job (`Commands.run`), a real
/// PostgreSQL, and RevenueCat / App Store / verifyReceipt answers on loopback in their real wire formats.
/// Each asserts what the database, the report and the exit code show.
@Suite("Fail closed: incomplete evidence never changes a tier", .serialized, .enabled(if: Harness.isEnabled, Harness.skip))
struct FailClosedEvidenceTests {
    func answer(_ h: Harness, _ userID: String, _ body: Data) async {
        await h.revenueCat.setFault(.raw(status: 200, headers: ["content-type": "application/json"], body: body), for: userID)
    }

    @Test("missing product_identifier, missing expiry, a pass, an old refund: only stated facts change a row")
    func revenueCatEvidence() async throws {
        try await Harness.with { h in
            // A paying user whose active entitlement has no product_identifier yet: never downgraded.
            try await h.seed(h.row("e-noproduct", tier: 1, "active", end: -2))
            await answer(
                h, "e-noproduct",
                RevenueCatWorld.subscriberBody(
                    entitlements:
                        #"{"premium": {"expires_date": "\#(RevenueCatWorld.iso(28))", "purchase_date": "\#(RevenueCatWorld.iso(-2))"}}"#,
                    subscriptions: #"""
                        {"premium_monthly": {"store": "app_store", "is_sandbox": false, "purchase_date": "\#(RevenueCatWorld.iso(-32))",
                         "expires_date": "\#(RevenueCatWorld.iso(-2))", "period_type": "normal"}}
                        """#))
            // A subscription RevenueCat lists without an expiry: unknown, neither lifetime nor expired.
            try await h.seed(h.row("e-noexpiry", tier: 1, "active", end: -2))
            await answer(
                h, "e-noexpiry",
                RevenueCatWorld.subscriberBody(
                    subscriptions:
                        #"{"premium_monthly": {"store": "app_store", "is_sandbox": false, "purchase_date": "\#(RevenueCatWorld.iso(-32))"}}"#
                ))
            // ... and a lapsed user whose subscription has no expiry is not restored as lifetime.
            try await h.seed(h.row("e-noexpiry-lapsed", tier: 0, "expired", end: -5))
            await answer(
                h, "e-noexpiry-lapsed",
                RevenueCatWorld.subscriberBody(
                    subscriptions:
                        #"{"premium_monthly": {"store": "app_store", "is_sandbox": false, "purchase_date": "\#(RevenueCatWorld.iso(-32))"}}"#
                ))
            // An expired 30-day pass: ends at its entitlement's expiry; never a permanent tier.
            let pass = RevenueCatWorld.subscriberBody(
                entitlements:
                    #"{"premium": {"expires_date": "\#(RevenueCatWorld.iso(-10))", "product_identifier": "premium_monthly", "purchase_date": "\#(RevenueCatWorld.iso(-40))"}}"#,
                nonSubscriptions: #"""
                    {"premium_monthly": [{"id": "np1", "store": "app_store", "is_sandbox": false, "purchase_date": "\#(RevenueCatWorld.iso(-40))",
                      "store_transaction_id": "np1"}]}
                    """#)
            try await h.seed(h.row("e-pass-lapsed", tier: 0, "expired", end: -10))
            await answer(h, "e-pass-lapsed", pass)
            try await h.seed(h.row("e-pass-held", tier: 1, "active", end: -10))
            await answer(h, "e-pass-held", pass)
            // A subscription with is_sandbox missing that would restore: unknown environment, no restore.
            try await h.seed(h.row("e-nosandbox", tier: 0, "expired", end: -5))
            await answer(
                h, "e-nosandbox",
                RevenueCatWorld.subscriberBody(
                    subscriptions:
                        #"{"premium_monthly": {"store": "app_store", "purchase_date": "\#(RevenueCatWorld.iso(-3))", "expires_date": "\#(RevenueCatWorld.iso(27))"}}"#
                ))
            // A refund of the previous period does not revoke the period that has just begun.
            try await h.seed(
                h.row("e-oldrefund", tier: 1, "active", end: -3),
                Harness.subscription(purchased: -3, expires: 27, refunded: -10))

            let result = try await h.run { $0.maxDowngradeRatio = 1 }
            #expect(result.exitStatus == .userErrors, "users skipped for missing evidence are errors for the operator")
            let rows = try h.report(result)

            for id in ["e-noproduct", "e-noexpiry"] {
                let user = try #require(try await h.user(id))
                #expect(user.currentTier == 1 && user.statusText == "active" && user.endDate == Harness.day(-2), "\(id) untouched")
                #expect(rows[id]?.action == "skipped" && rows[id]?.drift == ["fetch_error"] && rows[id]?.applied == false, "\(id)")
                let intents = try await h.intents(id)
                let audits = try await h.auditRows(id)
                #expect(intents == 0 && audits == 0, "\(id): no intent, no audit row")
            }
            #expect(rows["e-noproduct"]?.error?.contains("product_identifier") == true)
            #expect(rows["e-noexpiry"]?.error?.contains("expiry") == true)

            let lapsed = try #require(try await h.user("e-noexpiry-lapsed"))
            #expect(lapsed.currentTier == 0 && lapsed.endDate == Harness.day(-5), "not restored as lifetime")
            #expect(try await h.intents("e-noexpiry-lapsed") == 0)

            let passLapsed = try #require(try await h.user("e-pass-lapsed"))
            #expect(passLapsed.currentTier == 0 && passLapsed.endDate != nil, "an expired pass is not a permanent tier")
            #expect(rows["e-pass-lapsed"]?.action != "restore")
            let passHeld = try #require(try await h.user("e-pass-held"))
            #expect(passHeld.currentTier == 0 && passHeld.endDate == Harness.day(-10), "the pass ended at its entitlement's expiry")
            #expect(rows["e-pass-held"]?.action == "downgrade")

            let noSandbox = try #require(try await h.user("e-nosandbox"))
            #expect(noSandbox.currentTier == 0, "an unknown environment never grants a paid tier")
            #expect(try await h.intents("e-nosandbox") == 0)

            let oldRefund = try #require(try await h.user("e-oldrefund"))
            #expect(oldRefund.currentTier == 1 && oldRefund.endDate == Harness.day(27), "the new period stands")
            #expect(rows["e-oldrefund"]?.drift.contains("missed_refund") == false)
        }
    }

    @Test(
        "Apple's status is evidence: billing grace without renewal info keeps the tier, revoked without a date revokes, contradictions are not believed"
    )
    func appleStatusEvidence() async throws {
        try await Harness.with(apple: true) { h in
            try await h.seed(
                h.row("a-grace", tier: 1, "active", end: -2, txn: "7101"), Harness.subscription(expires: -2, txn: "7101"))
            var grace = AppStoreScenario(
                originalTransactionID: "7101", productID: "premium_monthly", status: 4, purchaseDate: Harness.day(-32),
                expiresDate: Harness.day(-2), isInBillingRetryPeriod: true)
            grace.omitsRenewalInfo = true
            await h.appStore.setScenario(grace)

            try await h.seed(
                h.row("a-revoked", tier: 1, "active", end: -1, txn: "7102"), Harness.subscription(expires: 29, txn: "7102"))
            await h.appStore.setScenario(
                AppStoreScenario(
                    originalTransactionID: "7102", productID: "premium_monthly", status: 5, purchaseDate: Harness.day(-1),
                    expiresDate: Harness.day(29)))

            // Status 1 (active) with a period that ended before Apple signed it: contradictory, believed neither way.
            try await h.seed(
                h.row("a-contradiction", tier: 1, "active", end: -3, txn: "7103"), Harness.subscription(expires: -3, txn: "7103"))
            await h.appStore.setScenario(
                AppStoreScenario(
                    originalTransactionID: "7103", productID: "premium_monthly", status: 1, purchaseDate: Harness.day(-33),
                    expiresDate: Harness.day(-3)))

            let result = try await h.run { $0.maxDowngradeRatio = 1 }
            let rows = try h.report(result)
            let graceUser = try #require(try await h.user("a-grace"))
            #expect(graceUser.currentTier == 1 && graceUser.statusText == "billing_issue", "status 4 entitles without renewal info")
            #expect(rows["a-grace"]?.pushIntent == ["billing_issue"])

            let revoked = try #require(try await h.user("a-revoked"))
            #expect(revoked.currentTier == 0 && revoked.statusText == "refunded", "status 5 revokes without a revocation date")

            let contradiction = try #require(try await h.user("a-contradiction"))
            #expect(contradiction.currentTier == 1 && contradiction.endDate == Harness.day(-3), "untouched")
            #expect(rows["a-contradiction"]?.drift == ["verification_failed"])
            #expect(try await h.intents("a-contradiction") == 0)
            #expect(result.exitStatus == .userErrors)
        }
    }

    @Test("the receipt bridge believes only the app's own receipts and never binds a transaction another row holds")
    func receiptBridge() async throws {
        try await Harness.with(apple: true, receipts: true) { h in
            func receipt(_ data: String, id: String, bundle: String? = nil) -> AppleReceiptScenario {
                AppleReceiptScenario(
                    receiptData: data,
                    transactions: [
                        .init(
                            originalTransactionID: id, transactionID: id + "1", productID: "premium_monthly",
                            purchaseDate: Harness.day(-3), expiresDate: Harness.day(27))
                    ],
                    renewals: [.init(originalTransactionID: id, productID: "premium_monthly")], bundleID: bundle)
            }
            // Another app's receipt: not believed.
            try await h.seed(h.row("r-foreign", tier: 1, "active", end: -3), Harness.subscription(expires: -3))
            try await h.db.receipts.saveReceipt("receipt-foreign", for: "r-foreign")
            await h.receipts.setScenario(receipt("receipt-foreign", id: "8201", bundle: "com.example.other"))

            // A receipt revealing a transaction another user's row already holds: a conflict, never written here.
            try await h.seed(h.row("r-owner", tier: 1, "active", end: 27, txn: "8202"))
            try await h.seed(h.row("r-claimant", tier: 1, "active", end: -3), Harness.subscription(expires: -3))
            try await h.db.receipts.saveReceipt("receipt-shared", for: "r-claimant")
            await h.receipts.setScenario(receipt("receipt-shared", id: "8202"))
            await h.appStore.setScenario(
                AppStoreScenario(
                    originalTransactionID: "8202", transactionID: "82021", productID: "premium_monthly", status: 1,
                    purchaseDate: Harness.day(-3), expiresDate: Harness.day(27)))

            let result = try await h.run { $0.maxDowngradeRatio = 1 }
            #expect(result.exitStatus == .userErrors)
            let rows = try h.report(result)

            let foreign = try #require(try await h.user("r-foreign"))
            #expect(foreign.currentTier == 1 && foreign.originalTransactionID == nil, "untouched")
            #expect(rows["r-foreign"]?.drift == ["verification_failed"])
            #expect(rows["r-foreign"]?.error?.contains("bundle") == true)

            let claimant = try #require(try await h.user("r-claimant"))
            #expect(claimant.originalTransactionID == nil, "a transaction another row holds is never written to this one")
            #expect(claimant.currentTier == 1 && claimant.endDate == Harness.day(-3), "untouched")
            #expect(rows["r-claimant"]?.action == "skipped" && rows["r-claimant"]?.drift == ["source_conflict"])
            #expect(rows["r-claimant"]?.error?.contains("r-owner") == true)
            let owner = try #require(try await h.user("r-owner"))
            #expect(owner.originalTransactionID == "8202")
        }
    }

    @Test(
        "a transaction id Apple does not know is absence: unknown at both sources is unknown_at_source; RevenueCat's own evidence still decides"
    )
    func appleDoesNotKnowTheID() async throws {
        try await Harness.with(apple: true) { h in
            // Unknown to RevenueCat (201) and to Apple (4040010): absence everywhere, untouched, not an error.
            try await h.seed(h.row("x-nowhere", tier: 1, "active", end: -2, txn: "7901"))
            // RevenueCat knows the subscription ended; Apple does not know the id the row holds: RevenueCat decides.
            try await h.seed(
                h.row("x-rc-ended", tier: 1, "active", end: -2, txn: "7902"), Harness.subscription(expires: -2, txn: "7902"))

            let result = try await h.run { $0.maxDowngradeRatio = 1 }
            let rows = try h.report(result)
            let nowhere = try #require(try await h.user("x-nowhere"))
            #expect(nowhere.currentTier == 1 && nowhere.endDate == Harness.day(-2), "untouched")
            #expect(rows["x-nowhere"]?.drift == ["unknown_at_source"] && rows["x-nowhere"]?.action == "skipped")
            #expect(rows["x-nowhere"]?.error?.contains("Apple does not know") == true)
            let ended = try #require(try await h.user("x-rc-ended"))
            #expect(ended.currentTier == 0, "RevenueCat positively shows the end; Apple's absence is no evidence either way")
            #expect(result.exitStatus == .ok, "absence is not an error")
        }
    }
}
