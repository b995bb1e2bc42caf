import Foundation
import Logging
import SubreconCore
import SubreconPorts
import SubreconTestKit
import Testing

@testable import SubreconJob

/// The instant the job judges by in these tests, and days around it.
let asOf = Date(timeIntervalSince1970: 1_790_000_000)  // 2026-09-21T14:13:20Z
func day(_ n: Double) -> Date { asOf.addingTimeInterval(n * 86_400) }

let testCatalog = ProductCatalog([
    .init(productID: "premium_monthly", tier: 1, entitlement: "premium"),
    .init(productID: "pro_monthly", tier: 2, entitlement: "pro"),
])

/// The users the tests seed, each with what RevenueCat answers about it and what the job must do.
enum Scenario: CaseIterable {
    /// Tier held, period ended two days ago, not renewed: downgrade (an `expired` intent).
    case lapsed
    /// Tier held, the row's end passed but RevenueCat shows a renewal: extend.
    case renewed
    /// Tier held, the period ended yesterday, in billing grace: billing issue (a `billing_issue` intent).
    case billing
    /// No tier, a lapsed row RevenueCat agrees with: in sync, nothing written.
    case inSync
    /// No tier, lapsed, but RevenueCat shows a new purchase: restore (a `restored` intent).
    case restored

    var row: (tier: Int, status: String, end: Double) {
        switch self {
        case .lapsed, .renewed: (1, "active", -2)
        case .billing: (1, "active", -1)
        case .inSync, .restored: (0, "expired", -9)
        }
    }

    var purchase: PurchaseFact {
        switch self {
        case .lapsed: subscription(expires: -2)
        case .renewed: subscription(purchased: -2, expires: 28)
        case .billing: subscription(expires: -1, grace: 10, billingIssue: -1)
        case .inSync: subscription(expires: -9)
        case .restored: subscription(purchased: -1, expires: 29)
        }
    }

    var action: Action {
        switch self {
        case .lapsed: .downgrade
        case .renewed: .extend
        case .billing: .statusChange
        case .inSync: .none
        case .restored: .restore
        }
    }

    func userRow(_ id: String) -> UserRow {
        UserRow(
            id: id, currentTier: row.tier, status: row.status, endDate: day(row.end), source: "apple_iap",
            productID: "premium_monthly", originalTransactionID: "txn", autoRenew: true)
    }

    var facts: SourceFacts { SourceFacts(revenueCatKnowsSubscriber: true, revenueCatPurchases: [purchase]) }
}

func subscription(
    purchased: Double = -30, expires: Double, grace: Double? = nil, billingIssue: Double? = nil
) -> PurchaseFact {
    PurchaseFact(
        productID: "premium_monthly", store: .appStore, isSandbox: false, purchaseDate: day(purchased), expiresDate: day(expires),
        gracePeriodExpiresDate: grace.map(day), billingIssueDetectedAt: billingIssue.map(day), autoRenew: true,
        originalTransactionID: "txn", price: Money(amount: 9.99, currency: "USD"), line: nil, buyer: .unstated)
}

/// One in-memory world: the database ports, the scripted source, the clock and a report folder of its own.
struct JobFixture {
    let database: InMemoryDatabase
    let source: ScriptedFactSource
    let clock = TestClock(asOf.addingTimeInterval(3600))
    let reportDirectory: URL

    /// A fresh world with `users` seeded (id → scenario), each answered as its scenario says; removed afterwards.
    static func with<T>(
        _ users: [String: Scenario], _ body: (JobFixture) async throws -> T
    ) async throws -> T {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("subrecon-job-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let fixture = JobFixture(
            database: InMemoryDatabase(catalog: testCatalog),
            source: ScriptedFactSource(users.mapValues { .facts($0.facts) }), reportDirectory: folder)
        fixture.database.insert(users.map { $0.value.userRow($0.key) })
        return try await body(fixture)
    }

    /// The ids of `count` users of `scenario`, named `prefix-00`…
    static func ids(_ prefix: String, _ count: Int) -> [String] { (0..<count).map { String(format: "\(prefix)-%02d", $0) } }

    func options(_ configure: (inout RunOptions) -> Void = { _ in }) -> RunOptions {
        var options = RunOptions(asOf: asOf, reportDirectory: reportDirectory)
        options.concurrency = 2
        options.sweepDays = 0  // a tier holder is a candidate by rule only
        options.sweepFreeDays = 0  // the free-row sweep's own tests turn it on
        options.maxDowngradeRatio = 1
        configure(&options)
        return options
    }

    /// The job over these ports (no feeds: the rules of docs/CONTRACT.md "Which users a run asks about" only).
    func job() -> ReconcileJob {
        let ports = JobPorts(
            candidates: database, catalog: database, journal: database, verdicts: database, history: database, feeds: nil)
        return ReconcileJob(
            ports: ports, source: source, stats: RequestStats(), sourcesNote: [:],
            logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }),
            now: clock.now)
    }

    func run(_ options: RunOptions, runID: String) async throws -> RunResult {
        try await job().run(options, runID: runID, startedAt: clock.now())
    }

    /// The job's resume path, as `subrecon run --resume RUN_ID` takes it: the stored run's selection and progress.
    func resume(_ runID: String, _ configure: (inout RunOptions) -> Void = { _ in }) async throws -> RunResult {
        let stored = try #require(try await database.storedRun(id: runID))
        var options = self.options(configure)
        try StoredSelection.decode(try #require(stored.selection)).apply(to: &options)
        return try await job().run(options, runID: runID, startedAt: stored.record.startedAt, resume: stored.progress)
    }

    /// What a run leaves behind per user (row, audit rows, intents), comparable across worlds.
    var outcome: [String] {
        database.users.map { row in
            let end = row.endDate.map(ISO8601.string) ?? ""
            return "\(row.id)|\(row.currentTier)|\(row.statusText)|\(end)|"
                + "\(database.audits(of: row.id).count)|\(database.intents(of: row.id).count)"
        }
    }
}

extension InMemoryDatabase.Event {
    /// The users of an `appendVerdicts` event; nil for any other.
    var appendedUsers: [String]? {
        if case .appendVerdicts(let users) = self { return users }
        return nil
    }

    /// The users of an `apply` event; nil for any other.
    var appliedUsers: [String]? {
        if case .apply(let users) = self { return users }
        return nil
    }
}
