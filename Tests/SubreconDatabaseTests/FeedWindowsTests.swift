import Foundation
import Logging
import PostgresNIO
import SubreconCore
import SubreconDatabase
import SubreconPorts
import SubreconTestSupport
import Testing

/// The windows each store feed was read over (`reconcile_feed_windows`, CONTRACT "Hostile answers and bounded work"): a window is covered only when read
/// to its end by a run that completed; attempts are per feed and per shard.
@Suite("Feed windows (real PostgreSQL)", .serialized, .enabled(if: TestDatabase.isEnabled, TestDatabase.skipMessage))
struct FeedWindowsTests {
    static let asOf = ISO8601.date("2025-06-01T00:00:00Z")!
    static func day(_ days: Double) -> Date { asOf.addingTimeInterval(days * 86_400) }
    static let shard = ShardSpec(index: 0, count: 1)

    static func run(_ client: PostgresClient, _ id: String, status: String) async throws {
        try await client.query(
            "insert into reconcile_runs (id, mode, as_of, status) values (\(id), 'nightly', now(), \(status))",
            logger: Logger(label: "feed-windows-test"))
    }

    @Test("covered only when complete and its run completed; nil when never attempted; per feed and per shard")
    func coverage() async throws {
        try await TestDatabase.withDatabase { db, client in
            #expect(try await db.feeds.feedAttempts(feed: "app_store", shard: Self.shard, asOf: Self.asOf, days: 30) == nil)
            try await Self.run(client, "r-done", status: "completed")
            try await Self.run(client, "r-stopped", status: "running")
            try await Self.run(client, "r-failed-feed", status: "completed")
            try await db.feeds.beginFeedWindow(
                runID: "r-done", feed: "app_store", shard: Self.shard, since: Self.day(-3), until: Self.day(-2))
            try await db.feeds.completeFeedWindow(runID: "r-done", feed: "app_store")
            try await db.feeds.beginFeedWindow(
                runID: "r-stopped", feed: "app_store", shard: Self.shard, since: Self.day(-2), until: Self.day(-1))
            try await db.feeds.completeFeedWindow(runID: "r-stopped", feed: "app_store")
            try await db.feeds.beginFeedWindow(
                runID: "r-failed-feed", feed: "app_store", shard: Self.shard, since: Self.day(-1), until: Self.day(0))
            let attempts = try #require(try await db.feeds.feedAttempts(feed: "app_store", shard: Self.shard, asOf: Self.asOf, days: 30))
            #expect(attempts.map(\.covered) == [true, false, false], "read to its end, but its run never completed; not read to its end")
            #expect(attempts.map(\.since) == [Self.day(-3), Self.day(-2), Self.day(-1)])
            #expect(FeedWindowRule.since(asOf: Self.asOf, attempts: attempts, lastCompletedNightlyStart: nil) == Self.day(-2))
            #expect(try await db.feeds.feedAttempts(feed: "stripe", shard: Self.shard, asOf: Self.asOf, days: 30) == nil)
            #expect(
                try await db.feeds.feedAttempts(feed: "app_store", shard: ShardSpec(index: 1, count: 2), asOf: Self.asOf, days: 30) == nil)
            #expect(
                try await db.feeds.feedAttempts(feed: "app_store", shard: Self.shard, asOf: Self.day(60), days: 30) == [],
                "attempted, every attempt older than 30 days")
            #expect(try await db.feeds.feedAttempts(feed: "app_store", shard: Self.shard, asOf: Self.day(-5), days: 30) == nil)
        }
    }
}
