import Foundation
import Logging
import SubreconCore
import SubreconPorts
import SubreconTestKit
import Synchronization
import Testing

@testable import SubreconJob

/// Tonight's feed refunds travel with the row (docs/CONTRACT.md "Finance figures", "Sources and the decision"): the
/// lookups of the user whose row holds the refunded purchase's identifier see them, in the run that read the feed,
/// in a dry run, and again in a resumed run that reads no feed.
@Suite("Feed refunds travel with the row", .timeLimit(.minutes(1)))
struct FeedRefundTravelTests {
    /// Google's voids feed stating one refund, of the purchase token `g-05`'s row holds; remembers what each asked
    /// row carried. Answers are the scripted source's.
    final class VoidsFeedSource: FactSource {
        let inner: ScriptedFactSource
        let stated: [FeedRefund]
        private let carried = Mutex<[String: [FeedRefundFact]]>([:])
        private let feedReads = Mutex(0)

        init(inner: ScriptedFactSource, stated: [FeedRefund]) {
            self.inner = inner
            self.stated = stated
        }

        var feedOrigins: [FactOrigin] { [.googlePlay] }

        func feed(_ origin: FactOrigin, since: Date, until: Date) async -> FeedRead? {
            feedReads.withLock { $0 += 1 }
            let entries = FeedEntries(identifiers: stated.map(\.identifier), entries: stated.count, refunds: stated)
            return FeedRead(
                source: .googlePlay, reason: .feed("google_void"), column: FeedColumn(.testGoogle), result: .success(entries))
        }

        func facts(for row: UserRow) async -> SourceFacts {
            carried.withLock { $0[row.id] = row.feedRefunds }
            return await inner.facts(for: row)
        }

        /// The refunds each asked row carried, by user (the last time it was asked).
        var refundsCarried: [String: [FeedRefundFact]] { carried.withLock { $0 } }
        var reads: Int { feedReads.withLock { $0 } }
    }

    static let refund = SeenRefund(
        store: StoreKind.playStore.rawValue, transactionID: "GPA.1111-2222-3333-44444..0", refundedAt: day(-1), amount: 9.99,
        currency: "USD")
    static let sandboxRefund = SeenRefund(
        store: StoreKind.playStore.rawValue, transactionID: "GPA.9999-sandbox..0", refundedAt: day(-1), amount: nil, currency: nil)

    /// Six users; `g-05`'s row holds the purchase token the feed's refunds name.
    static func world(_ body: (JobFixture, VoidsFeedSource) async throws -> Void) async throws {
        let users = Dictionary(uniqueKeysWithValues: JobFixture.ids("g", 6).map { ($0, Scenario.renewed) })
        try await JobFixture.with(users) { world in
            var holder = Scenario.renewed.userRow("g-05")
            holder.identifiers[.googlePlay] = "tok-g05"
            world.database.insert([holder])
            let source = VoidsFeedSource(
                inner: world.source,
                stated: [
                    FeedRefund(identifier: "tok-g05", refund: refund, isSandbox: false),
                    FeedRefund(identifier: "tok-g05", refund: sandboxRefund, isSandbox: true),
                    FeedRefund(identifier: "tok-nobody", refund: sandboxRefund, isSandbox: false),
                ])
            try await body(world, source)
        }
    }

    static func job(_ world: JobFixture, _ source: VoidsFeedSource) -> ReconcileJob {
        var ports = JobPorts(
            candidates: world.database, catalog: world.database, journal: world.database, verdicts: world.database,
            history: world.database, feeds: world.database)
        ports.refunds = world.database
        return ReconcileJob(
            ports: ports, source: source, stats: RequestStats(), sourcesNote: [:],
            logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }), now: world.clock.now)
    }

    static func options(_ world: JobFixture, stop: StopSignal? = nil, dryRun: Bool = false) -> RunOptions {
        world.options {
            $0.concurrency = 1
            $0.tuning.ledgerBatchSize = 1
            $0.stop = stop
            $0.dryRun = dryRun
        }
    }

    @Test("the run that read the feed, and a dry run: the holder's row carries its production refund, nobody else's any")
    func firstAttempt() async throws {
        for dryRun in [false, true] {
            try await Self.world { world, source in
                let result = try await Self.job(world, source).run(
                    Self.options(world, dryRun: dryRun), runID: "run-\(dryRun)", startedAt: world.clock.now())
                #expect(result.exitStatus == .ok)
                let carried = source.refundsCarried
                #expect(carried.count == 6, "every user asked (dry run: \(dryRun))")
                #expect(
                    carried["g-05"] == [FeedRefundFact(identifier: "tok-g05", refund: Self.refund)],
                    "the holder's refund with the token it named, never a sandbox one in production (dry run: \(dryRun))")
                #expect(carried.filter { $0.key != "g-05" && !$0.value.isEmpty }.isEmpty, "nobody else carries a refund")
            }
        }
    }

    @Test("a run stopped before the holder was asked: --resume reads no feed and the holder's row carries the refund again, by its order")
    func resumed() async throws {
        try await Self.world { world, source in
            let stop = StopSignal()
            world.source.whenAsked { _, count in
                if count == 2 { stop.stop(reason: "SIGTERM") }
            }
            await #expect(throws: CommandFailure.self) {
                try await Self.job(world, source).run(Self.options(world, stop: stop), runID: "run-voids", startedAt: world.clock.now())
            }
            #expect(source.refundsCarried["g-05"] == nil, "stopped before the holder was asked")
            #expect(source.reads == 1)

            world.source.whenAsked { _, _ in }
            let stored = try #require(try await world.database.storedRun(id: "run-voids"))
            var options = Self.options(world)
            try StoredSelection.decode(try #require(stored.selection)).apply(to: &options)
            let resumed = try await Self.job(world, source).run(
                options, runID: "run-voids", startedAt: stored.record.startedAt, resume: stored.progress)
            #expect(resumed.exitStatus == .ok)
            #expect(source.reads == 1, "a resumed run reads no feed again")
            #expect(
                source.refundsCarried["g-05"] == [FeedRefundFact(identifier: nil, refund: Self.refund)],
                "read back by its store transaction: the refund, not the token")
        }
    }
}
