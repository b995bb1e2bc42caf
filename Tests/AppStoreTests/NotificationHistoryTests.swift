import Foundation
import StoreSimulator
import SubreconCore
import Testing

@testable import AppStore

/// Apple's notification history as a store feed (CONTRACT "Which users a run asks about"): pages, verification, dedupe, failure.
@Suite("App Store notification history feed over loopback", .serialized)
struct NotificationHistoryTests {
    static let since = Date().addingTimeInterval(-3 * 86_400)

    @Test("several pages of every entitlement type and the undelivered ones, verified, deduplicated by notificationUUID")
    func pagesAndDedupe() async throws {
        let h = try await AppStoreHarness(scenarios: [], split: false)
        await h.history.setPageSize(2)
        let sent = Date().addingTimeInterval(-86_400)
        for n in 0..<5 {
            await h.history.add(AppleHistoryNotification(type: "REFUND", originalTransactionID: "r\(n)", sentAt: sent))
        }
        // Undelivered and a REVOKE: read by both the onlyFailures query and the REVOKE query; one entry.
        await h.history.add(
            AppleHistoryNotification(uuid: "dup-1", type: "REVOKE", originalTransactionID: "v1", sentAt: sent, deliveryFailed: true))
        // A type that does not change entitlement is not asked for (unless undelivered).
        await h.history.add(AppleHistoryNotification(type: "PRICE_INCREASE", originalTransactionID: "p1", sentAt: sent))
        // Outside the window.
        await h.history.add(
            AppleHistoryNotification(type: "REFUND", originalTransactionID: "old", sentAt: Self.since.addingTimeInterval(-60)))
        let feed = try await h.client.notificationHistory(since: Self.since, until: Date()).get()
        await h.stop()
        #expect(Set(feed.entries.map(\.originalTransactionID)) == ["r0", "r1", "r2", "r3", "r4", "v1"])
        #expect(feed.entries.filter { $0.notificationUUID == "dup-1" }.count == 1)
        #expect(feed.rejected == 0)
        #expect(feed.pages >= 3 + 1 + 1, "REFUND took 3 pages of 2")
    }

    @Test("a forged notification, or one of another app, is counted and ignored")
    func forgedIsRejected() async throws {
        let h = try await AppStoreHarness(scenarios: [], split: false)
        let sent = Date().addingTimeInterval(-3_600)
        await h.history.add(AppleHistoryNotification(type: "REFUND", originalTransactionID: "good", sentAt: sent))
        await h.history.add(AppleHistoryNotification(type: "REFUND", originalTransactionID: "forged", sentAt: sent, forged: true))
        await h.history.add(
            AppleHistoryNotification(type: "REFUND", originalTransactionID: "other-app", sentAt: sent, bundleID: "com.other.app"))
        let feed = try await h.client.notificationHistory(since: Self.since, until: Date()).get()
        await h.stop()
        #expect(feed.entries.map(\.originalTransactionID) == ["good"])
        #expect(feed.rejected == 2)
    }

    @Test("a failing history is an error for the feed (retried first), never a partial answer taken as complete")
    func failure() async throws {
        let h = try await AppStoreHarness(scenarios: [], split: false)
        await h.history.add(AppleHistoryNotification(type: "REFUND", originalTransactionID: "x", sentAt: Date().addingTimeInterval(-60)))
        await h.history.failNext(status: 500, times: 100)
        let result = await h.client.notificationHistory(since: Self.since, until: Date())
        await h.stop()
        guard case .failure(let error) = result else {
            Issue.record("expected a failure")
            return
        }
        #expect(error.message.contains("notification history"))
    }

    // MARK: Refunds the feed states (CONTRACT "Finance figures")

    /// A refunded transaction as both Apple's history and a status lookup carry it.
    static func refundedTransaction(ownership: String = "PURCHASED", trial: Bool = false) -> JWSTransactionDecodedPayload {
        var transaction = JWSTransactionDecodedPayload(
            originalTransactionId: "1000000042", transactionId: "2000000077", bundleId: "com.example", productId: "premium_monthly",
            purchaseDate: Date(timeIntervalSince1970: 1_780_000_000), expiresDate: Date(timeIntervalSince1970: 1_782_592_000),
            type: "Auto-Renewable Subscription", signedDate: Date(timeIntervalSince1970: 1_780_500_000), revocationReason: 0,
            revocationDate: Date(timeIntervalSince1970: 1_780_400_000), environment: "Production", price: 9_990, currency: "EUR")
        transaction.inAppOwnershipType = ownership
        if trial {
            transaction.offerType = 1
            transaction.offerDiscountType = "FREE_TRIAL"
        }
        return transaction
    }

    static func entry(_ type: String, _ transaction: JWSTransactionDecodedPayload?) -> AppleNotificationEntry {
        AppleNotificationEntry(
            notificationUUID: "uuid-" + type, notificationType: type, subtype: nil, originalTransactionID: "1000000042",
            transaction: transaction)
    }

    @Test("a REFUND entry states the refund a status lookup of the same transaction states: same store, id, date and amount")
    func refundKeyedAsTheLookup() throws {
        let asOf = Date(timeIntervalSince1970: 1_781_000_000)
        let transaction = Self.refundedTransaction()
        let fromFeed = SeenRefund.of([try #require(Self.entry("REFUND", transaction).refundedPurchase)], asOf: asOf)
        let lookup = try AppleSubscriptionMapping.purchaseFact(status: 5, transaction: transaction, renewal: nil)
        #expect(fromFeed == SeenRefund.of([lookup], asOf: asOf))
        let refund = try #require(fromFeed.first)
        #expect(fromFeed.count == 1)
        #expect(refund.store == "app_store" && refund.transactionID == "2000000077")
        #expect(refund.refundedAt == Date(timeIntervalSince1970: 1_780_400_000))
        #expect(refund.amount == Decimal(string: "9.99") && refund.currency == "EUR")
        #expect(Self.entry("REFUND", transaction).refundedPurchase?.isSandbox == false)
    }

    @Test("a family-shared or free-trial refund is kept at 0, like the lookup's; a REVOKE states one too")
    func familySharedAndTrialAreZero() throws {
        let asOf = Date(timeIntervalSince1970: 1_781_000_000)
        for transaction in [Self.refundedTransaction(ownership: "FAMILY_SHARED"), Self.refundedTransaction(trial: true)] {
            let fromFeed = SeenRefund.of([try #require(Self.entry("REVOKE", transaction).refundedPurchase)], asOf: asOf)
            let lookup = try AppleSubscriptionMapping.purchaseFact(status: 5, transaction: transaction, renewal: nil)
            #expect(fromFeed == SeenRefund.of([lookup], asOf: asOf))
            #expect(fromFeed.first?.amount == 0)
            #expect(fromFeed.first?.transactionID == "2000000077")
        }
    }

    @Test("REFUND_REVERSED, other types, a refund without a revocationDate and an entry without its transaction state none")
    func notARefund() {
        var unrevoked = Self.refundedTransaction()
        unrevoked.revocationDate = nil
        #expect(Self.entry("REFUND_REVERSED", Self.refundedTransaction()).refundedPurchase == nil)
        #expect(Self.entry("DID_RENEW", Self.refundedTransaction()).refundedPurchase == nil)
        #expect(Self.entry("REFUND", unrevoked).refundedPurchase == nil)
        #expect(Self.entry("REFUND", nil).refundedPurchase == nil)
    }

    @Test("the feed carries the verified signed transaction: a refund read over loopback is priced from it")
    func refundOverLoopback() async throws {
        let h = try await AppStoreHarness(scenarios: [], split: false)
        let sent = Date().addingTimeInterval(-3_600)
        await h.history.add(
            AppleHistoryNotification(
                type: "REFUND", originalTransactionID: "o-1", sentAt: sent, transactionID: "t-1", revocationDate: sent,
                price: 4_990, currency: "USD"))
        await h.history.add(AppleHistoryNotification(type: "DID_RENEW", originalTransactionID: "o-2", sentAt: sent))
        let feed = try await h.client.notificationHistory(since: Self.since, until: Date()).get()
        await h.stop()
        let refunds = SeenRefund.of(feed.entries.compactMap(\.refundedPurchase), asOf: Date())
        #expect(refunds.count == 1)
        #expect(refunds.first?.transactionID == "t-1" && refunds.first?.amount == Decimal(string: "4.99"))
        #expect(refunds.first?.currency == "USD" && refunds.first?.store == "app_store")
    }
}
