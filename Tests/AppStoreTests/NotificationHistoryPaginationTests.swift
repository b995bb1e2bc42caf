import Foundation
import StoreSimulator
import SubreconCore
import Testing

@testable import AppStore

/// Every list is bounded and ends incomplete, never complete (CONTRACT "Hostile answers and bounded work"): Apple's notification history
/// over loopback with a page missing `hasMore` and a `paginationToken` repeated forever.
@Suite("App Store notification history pagination ends incomplete, never complete", .serialized)
struct NotificationHistoryPaginationTests {
    static let since = Date().addingTimeInterval(-3 * 86_400)

    @Test("a page without hasMore ends the history as incomplete: the refund on page 2 is never taken as absent")
    func pageWithoutHasMore() async throws {
        let h = try await AppStoreHarness(scenarios: [], split: false)
        await h.history.setPageSize(1)
        let sent = Date().addingTimeInterval(-86_400)
        await h.history.add(AppleHistoryNotification(type: "REFUND", originalTransactionID: "page-1", sentAt: sent))
        await h.history.add(AppleHistoryNotification(type: "REFUND", originalTransactionID: "page-2", sentAt: sent))
        await h.history.setPageFault(.omitHasMore)
        let result = await h.client.notificationHistory(since: Self.since, until: Date())
        await h.stop()
        guard case .failure(let error) = result else {
            Issue.record("a page without hasMore was read as the end of the list: \(result)")
            return
        }
        #expect(error.message.contains("incomplete") && error.message.contains("hasMore"))
    }

    @Test("a paginationToken seen before ends the history at once as incomplete: two requests, not 500")
    func repeatedToken() async throws {
        let h = try await AppStoreHarness(scenarios: [], split: false)
        await h.history.add(
            AppleHistoryNotification(type: "REFUND", originalTransactionID: "r", sentAt: Date().addingTimeInterval(-60)))
        await h.history.setPageFault(.repeatToken)
        let result = await h.client.notificationHistory(since: Self.since, until: Date())
        let requests = await h.history.requests()
        await h.stop()
        guard case .failure(let error) = result else {
            Issue.record("a repeated paginationToken was followed to a complete answer")
            return
        }
        #expect(error.message.contains("incomplete") && error.message.contains("seen before"))
        #expect(requests == 2, "the first page, then the page whose token was seen before: \(requests) requests")
    }

    @Test("the continuation rule: hasMore false ends, a new token continues, anything else is incomplete")
    func continuationRule() {
        var seen = Set<String>()
        func next(_ hasMore: Bool?, _ token: String?) -> String {
            switch AppStoreClient.nextToken(hasMore: hasMore, paginationToken: token, seen: &seen) {
            case .success(nil): "end"
            case .success(let next?): next
            case .failure: "incomplete"
            }
        }
        #expect(next(false, "t") == "end")
        #expect(next(true, "t1") == "t1")
        #expect(next(true, "t2") == "t2")
        #expect(next(nil, "t3") == "incomplete", "no hasMore")
        #expect(next(nil, nil) == "incomplete", "no hasMore, no token")
        #expect(next(true, nil) == "incomplete", "hasMore without a token")
        #expect(next(true, "") == "incomplete", "an empty token")
        #expect(next(true, "t1") == "incomplete", "a token seen before")
    }
}
