import Foundation
import StoreSimulator
import SubreconCore
import Testing

@testable import AppStore

/// Apple's notification history as a store feed (issue 11, SPEC 5.1): pages, verification, dedupe, failure.
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
        await h.history.add(AppleHistoryNotification(type: "REFUND", originalTransactionID: "old", sentAt: Self.since.addingTimeInterval(-60)))
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
}
