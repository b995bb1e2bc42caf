import Foundation
import PostgresNIO
import StoreSimulator
import Subrecon
import SubreconCore
import SubreconDatabase
import SubreconReports
import SubreconTestSupport
import Testing

/// One randomized night, end to end and seeded so a failure replays (`SUBRECON_E2E_SEED=<seed> scripts/test
/// --filter RandomizedNight`): users whose truth the stores state (RevenueCat, or Stripe with its period refunds),
/// users whose evidence is unusable, random source faults, a webhook writer racing the job, and the real binary stopped at a random moment (SIGTERM, kill -9, or
/// not at all) and resumed; in some seeds Stripe is down all night (every request 503), and every night holds a
/// poisoned row or two (a NULL where the contract says not null). Then the invariants: nobody ends below the tier the
/// stores entitle, unusable evidence leaves the row untouched, a poisoned row is its own `row_error` (untouched, the
/// night goes on), one audit row and at most one intent of a kind per change, webhook writes win, a rerun changes
/// nothing, and a rerun that meets the dead Stripe for a whole (fast-clocked) minute declares it down.
@Suite("A randomized night", .serialized, .enabled(if: Harness.isEnabled, Harness.skip), .timeLimit(.minutes(3)))
struct RandomizedNightTests {
    /// What the stores say about one generated user, and what the job must end with.
    enum Truth: CustomStringConvertible {
        /// The stores entitle `tier` at T.
        case entitled(tier: Int)
        /// The stores positively end every purchase at T.
        case ended
        /// The evidence cannot be used: the row must stay exactly as it was.
        case unusable(String)

        var description: String {
            switch self {
            case .entitled(let tier): "entitled(\(tier))"
            case .ended: "ended"
            case .unusable(let why): "unusable(\(why))"
            }
        }
    }

    struct Generated {
        var row: UserRow
        var truth: Truth
        /// The store transaction of the refund the stores state for this user, kept once in `refunds_seen`.
        var refund: String?
    }

    static let seed: UInt64 =
        ProcessInfo.processInfo.environment["SUBRECON_E2E_SEED"].flatMap { UInt64($0) }
        ?? UInt64.random(in: 0...UInt64.max)

    @Test("invariants hold over random users, faults and a racing webhook writer")
    func night() async throws {
        let seed = Self.seed
        var rng = SeededRandom(seed: seed)
        let replay = "replay with SUBRECON_E2E_SEED=\(seed)"
        print("randomized night: seed \(seed)")
        try await StripeJobTests.with(revenueCat: true) { h, stripe in
            await h.revenueCat.setLatency(.milliseconds(25))
            var users: [String: Generated] = [:]
            let stripeDown = rng.chance(0.3)
            for index in 0..<60 {
                let id = String(format: "n-%03d", index)
                var generated =
                    rng.chance(0.25)
                    ? await Self.generateStripe(id: id, rng: &rng, harness: h, stripe: stripe, down: stripeDown)
                    : await Self.generate(id: id, rng: &rng, harness: h)
                try await h.store.insertUsers([generated.row])
                generated.row = try #require(try await h.user(id))  // as stored, updated_at included
                users[id] = generated
            }
            let racing = Set(users.keys.sorted().filter { _ in rng.chance(0.15) })
            if stripeDown { await stripe.setDown(status: 503) }
            let poisoned = try await Self.poisonRows(count: rng.int(1...2), harness: h)
            print("randomized night: Stripe \(stripeDown ? "down" : "up"), poisoned rows \(poisoned)")

            // The webhook writer: while the job runs, each racing user's row is rewritten once, at a random moment.
            let delays = racing.sorted().map { ($0, Int.random(in: 0...1_500, using: &rng)) }
            // The real binary, stopped at a random moment by SIGTERM or kill -9 (or not at all), then resumed.
            let interruption = rng.int(0...2)
            let stopAfter = rng.int(4...60)
            async let written: [String: Int64] = Self.webhookWrites(delays, client: h.client)
            let arguments = [
                "run", "--as-of", ISO8601.string(Harness.asOf), "--apply-past", "--max-downgrade-ratio", "1",
                "--concurrency", "4", "--revenuecat-rps", "200", "--stripe-rps", "200", "--report-dir", h.reportDirectory.path,
            ]
            let (process, _) = try SubreconBinary.start(arguments, environment: h.env.values, directory: h.reportDirectory)
            if interruption > 0 {
                while process.isRunning, await h.revenueCat.counters().totalRequests < stopAfter {
                    try await Task.sleep(for: .milliseconds(5))
                }
                kill(process.processIdentifier, interruption == 1 ? SIGTERM : SIGKILL)
            }
            let status = try await SubreconBinary.wait(process, limit: .seconds(120))
            let runID = try await Self.onlyRunID(h)
            if status != 0 && status != 1 {
                #expect(interruption == 2 || status == 75, "a stopped run exits 75, got \(status.map(String.init) ?? "none") — \(replay)")
                let (resume, _) = try SubreconBinary.start(
                    ["run", "--resume", runID, "--report-dir", h.reportDirectory.path], environment: h.env.values,
                    directory: h.reportDirectory)
                let resumed = try await SubreconBinary.wait(resume, limit: .seconds(120))
                #expect(resumed == 0 || resumed == 1, "the resumed run finishes — \(replay)")
            }
            let webhookVersions = try await written

            let rows = try Self.report(h, runID: runID)
            #expect(try await h.count("select count(*)::int from reconcile_verdicts") == rows.count, "one verdict per user — \(replay)")
            // A webhook write may take a racing user out of the candidates before the scan reaches them.
            let total = users.count + poisoned.count
            #expect(rows.count >= total - racing.count && rows.count <= total, "every candidate is in the report — \(replay)")
            // A poisoned row is one user's row_error: untouched, reported, and the night went on around it.
            #expect(try await Self.poisonedUntouched(poisoned, harness: h), "poisoned rows untouched — \(replay)")
            for id in poisoned {
                #expect(
                    rows[id]?.action == "skipped" && rows[id]?.drift.contains("row_error") == true,
                    "\(id): \(rows[id]?.drift ?? []) — \(replay)")
                #expect(try await h.auditRows(id) == 0, "\(id): no audit row — \(replay)")
            }

            for (id, generated) in users.sorted(by: { $0.key < $1.key }) {
                let final = try #require(try await h.user(id), Comment(rawValue: replay))
                let audits = try await h.auditRows(id)
                #expect(audits <= 1, "\(id): one audit row per change — \(replay)")
                let intentsByKind = try await Self.intentKinds(id, client: h.client)
                #expect(intentsByKind.values.allSatisfy { $0 <= 1 }, "\(id): at most one intent of a kind — \(replay)")

                let refunds = try await h.count("select count(*)::int from refunds_seen where user_id = \(id)")
                if let key = generated.refund, webhookVersions[id] == nil {
                    #expect(
                        try await h.count("select count(*)::int from refunds_seen where user_id = \(id) and transaction_id = \(key)") == 1,
                        "\(id): its refund is kept once — \(replay)")
                } else {
                    #expect(refunds <= (generated.refund == nil ? 0 : 1), "\(id): \(refunds) refunds kept — \(replay)")
                }
                if let version = webhookVersions[id] {
                    // Webhook writes win: the job never overwrites a version it did not read.
                    let jobSawIt = try await Self.auditBefore(id, client: h.client).contains(version)
                    #expect(final.updatedAtMicros == version || jobSawIt, "\(id): a webhook write was overwritten unseen — \(replay)")
                    continue
                }
                switch generated.truth {
                case .entitled(let tier):
                    #expect(final.currentTier == tier, "\(id) \(generated.truth): tier \(final.currentTier) — \(replay)")
                case .ended:
                    #expect(final.currentTier == 0, "\(id) \(generated.truth): tier \(final.currentTier) — \(replay)")
                case .unusable:
                    #expect(final == generated.row, "\(id) \(generated.truth): the row changed — \(replay)")
                    #expect(audits == 0 && intentsByKind.isEmpty, "\(id) \(generated.truth) — \(replay)")
                    #expect(rows[id]?.action == "skipped", "\(id) \(generated.truth): \(rows[id]?.action ?? "-") — \(replay)")
                }
            }

            // A rerun changes nothing for anyone the webhook did not touch, and queues no intent twice.
            let intentsBefore = try await h.count("select count(*)::int from push_intents")
            // The rerun's clock for declaring a source down runs 600 times fast: a whole minute of nothing but 503s from
            // a dead Stripe is 0.1 s here.
            let origin = ContinuousClock.now
            let second = try await h.run {
                $0.maxDowngradeRatio = 1
                $0.revenueCatRequestsPerSecond = 200
                $0.stripeRequestsPerSecond = 200
                $0.healthClock = { origin + (ContinuousClock.now - origin) * 600 }
            }
            if stripeDown {
                #expect(
                    second.summary.sourcesDown?.contains { $0.source == "stripe" } == true, "the dead Stripe is declared down — \(replay)")
            }
            #expect(try await Self.poisonedUntouched(poisoned, harness: h), "poisoned rows untouched by the rerun — \(replay)")
            let again = try h.report(second)
            for (id, row) in again where webhookVersions[id] == nil {
                #expect(row.applied == false || row.action == "none", "\(id): the rerun changed \(row.action) — \(replay)")
            }
            let changedAgain = try await h.count(
                "select count(*)::int from reconcile_changes where run_id = \(second.summary.runID)")
            #expect(changedAgain <= webhookVersions.count, "only users the webhook rewrote may change again — \(replay)")
            let intentsAfter = try await h.count("select count(*)::int from push_intents")
            #expect(intentsAfter - intentsBefore <= webhookVersions.count, Comment(rawValue: replay))
        }
    }

    /// One user: a stale row that the candidate scan picks up, and what the stores say.
    static func generate(id: String, rng: inout SeededRandom, harness h: Harness) async -> Generated {
        let product = rng.chance(0.5) ? "premium_monthly" : "pro_monthly"
        let tier = product == "premium_monthly" ? 1 : 2
        // A candidate row: a paid tier past its end, or lapsed within the lookback, or in billing issue.
        let row: UserRow
        switch rng.int(0...2) {
        case 0: row = h.row(id, tier: tier, "active", end: -Double(rng.int(1...20)), product: product)
        case 1: row = h.row(id, tier: 0, "expired", end: -Double(rng.int(1...40)), product: product)
        default:
            row = h.row(id, tier: tier, "billing_issue", end: -Double(rng.int(1...5)), grace: Double(rng.int(-3...3)), product: product)
        }
        let truth: Truth
        var refund: String?
        var subscriber: SimulatedSubscriber?
        switch rng.int(0...9) {
        case 0...2:
            subscriber = SimulatedSubscriber(
                firstSeen: Harness.day(-300),
                subscriptions: [Harness.subscription(product, purchased: -2, expires: Double(rng.int(1...30)))])
            truth = .entitled(tier: tier)
        case 3...4:
            subscriber = SimulatedSubscriber(
                firstSeen: Harness.day(-300), subscriptions: [Harness.subscription(product, expires: -Double(rng.int(1...30)))])
            truth = .ended
        case 5:
            subscriber = SimulatedSubscriber(
                firstSeen: Harness.day(-300),
                subscriptions: [
                    Harness.subscription(product, purchased: -3, expires: 27, refunded: -Double(rng.int(0...2)), txn: "txn-\(id)")
                ])
            truth = .ended
            refund = "txn-\(id)"
        case 6:
            subscriber = SimulatedSubscriber(
                firstSeen: Harness.day(-300),
                subscriptions: [Harness.subscription(product, expires: -1, grace: Double(rng.int(2...10)), billing: -1)])
            truth = .entitled(tier: tier)
        default:
            let broken: [(String, RevenueCatFault)] = [
                ("500 forever", .status(500)),
                ("malformed JSON", .malformedJSON),
                (
                    "expiry missing",
                    .raw(
                        status: 200, headers: [:],
                        body: FailClosedEvidenceTests.subscriberBody(
                            subscriptions:
                                #"{"\#(product)": {"store": "app_store", "is_sandbox": false, "purchase_date": "\#(FailClosedEvidenceTests.iso(-20))"}}"#
                        ))
                ),
                (
                    "entitlement without product",
                    .raw(
                        status: 200, headers: [:],
                        body: FailClosedEvidenceTests.subscriberBody(
                            entitlements: #"{"e": {"expires_date": "\#(FailClosedEvidenceTests.iso(20))"}}"#,
                            subscriptions:
                                #"{"\#(product)": {"store": "app_store", "is_sandbox": false, "expires_date": "\#(FailClosedEvidenceTests.iso(-20))"}}"#
                        ))
                ),
                ("unknown to RevenueCat", .raw(status: 201, headers: [:], body: FailClosedEvidenceTests.subscriberBody())),
            ]
            let (why, fault) = broken[rng.int(0...broken.count - 1)]
            await h.revenueCat.setFault(fault, for: id)
            truth = .unusable(why)
        }
        if let subscriber {
            await h.revenueCat.setSubscriber(subscriber, for: id)
            // Transient faults the job must ride out: a 429 or a 503 once.
            if rng.chance(0.2) { await h.revenueCat.setFault(.rateLimited(backoffMS: 20, retryAfter: nil), for: id, times: 1) }
            if rng.chance(0.1) { await h.revenueCat.setFault(.status(503), for: id, times: 1) }
        }
        return Generated(row: row, truth: truth, refund: refund)
    }

    /// One Stripe web subscriber (RevenueCat knows the user and lists nothing, so Stripe's answer decides): a paid
    /// period, one refunded in full or in part, canceled, past due, or evidence that cannot be used (the charges call
    /// failing, a full refund nobody dated); sometimes a transient 503 or 429 first.
    static func generateStripe(
        id: String, rng: inout SeededRandom, harness h: Harness, stripe: StripeSimulator, down: Bool
    ) async -> Generated {
        let customer = "cus_\(id)"
        let subscriptionID = "sub_\(id)"
        let intent = "pi_\(id)"
        let row =
            rng.chance(0.5)
            ? StripeJobTests.row(id, tier: 1, "active", end: -Double(rng.int(1...20)), customer: customer)
            : StripeJobTests.row(id, tier: 0, "expired", end: -Double(rng.int(1...40)), customer: customer)
        await h.revenueCat.setSubscriber(SimulatedSubscriber(firstSeen: Harness.day(-300), subscriptions: []), for: id)
        var subscription = StripeJobTests.subscription(subscriptionID, "active", from: -1, to: Double(rng.int(2...29)))
        subscription.latestInvoice = .paid(id: "in_\(id)", amount: 999, paymentIntent: intent, created: Harness.day(-1))
        func charge(refunded: Int64, dated: Bool = true) -> SimulatedStripeCharge {
            let refunds =
                refunded == 0 ? [] : [SimulatedStripeRefund(id: "re_\(id)", amount: refunded, created: dated ? Harness.day(-0.5) : nil)]
            return SimulatedStripeCharge(
                id: "ch_\(id)", paymentIntentID: intent, amount: 999, amountRefunded: refunded, created: Harness.day(-1), refunds: refunds)
        }
        let truth: Truth
        var refund: String?
        var charges = [charge(refunded: 0)]
        switch rng.int(0...6) {
        case 0: truth = .entitled(tier: 1)
        case 1:
            charges = [charge(refunded: 999)]
            truth = .ended
            refund = intent
        case 2:
            charges = [charge(refunded: Int64(rng.int(1...998)))]
            truth = .entitled(tier: 1)
        case 3:
            subscription = StripeJobTests.subscription(subscriptionID, "canceled", from: -31, to: -1, endedAt: -1)
            truth = .ended
        case 4:
            subscription.status = "past_due"
            subscription.latestInvoice = nil
            truth = .entitled(tier: 1)
        case 5:
            await stripe.setFault(.status(500), for: intent)
            truth = .unusable("Stripe charges call failing")
        default:
            charges = [charge(refunded: 999, dated: false)]
            truth = .unusable("a full Stripe refund nobody dated")
        }
        await stripe.setSubscriptions([subscription], forCustomer: customer)
        await stripe.addCharges(charges)
        if rng.chance(0.2) { await stripe.setFault(rng.chance(0.5) ? .status(503) : .rateLimited, for: customer, times: 1) }
        // Stripe down all night: whatever its data would say, nothing from it can be used.
        if down { return Generated(row: row, truth: .unusable("Stripe down all night"), refund: nil) }
        return Generated(row: row, truth: truth, refund: refund)
    }

    /// Rows a webhook bug (or an app's view) left with a NULL where the contract says not null: `n-poison-0` (tier 1
    /// past its end, status NULL) and `n-poison-1` (tier NULL, in billing issue). RevenueCat entitles both, so a job
    /// that read them as anything would change them. Returns their ids.
    static func poisonRows(count: Int, harness h: Harness) async throws -> [String] {
        try await h.client.query(
            "alter table users alter column subscription_status drop not null, alter column current_tier drop not null")
        let rows = [
            "('n-poison-0', 1, null, '2026-05-29T03:00:00Z', 'apple_iap', 'premium_monthly', '2026-05-01T00:00:00Z')",
            "('n-poison-1', null, 'billing_issue', '2026-05-29T03:00:00Z', 'apple_iap', 'premium_monthly', '2026-05-01T00:00:00Z')",
        ].prefix(count)
        try await h.client.query(
            PostgresQuery(
                unsafeSQL: """
                    insert into users (id, current_tier, subscription_status, subscription_end_date, subscription_source, \
                    iap_product_id, updated_at) values \(rows.joined(separator: ", "))
                    """))
        let ids = (0..<count).map { "n-poison-\($0)" }
        for id in ids {
            await h.revenueCat.setSubscriber(
                SimulatedSubscriber(
                    firstSeen: Harness.day(-300), subscriptions: [Harness.subscription("premium_monthly", purchased: -2, expires: 20)]),
                for: id)
        }
        return ids
    }

    /// The poisoned rows exactly as inserted.
    static func poisonedUntouched(_ ids: [String], harness h: Harness) async throws -> Bool {
        let same = try await h.count(
            """
            select count(*)::int from users where updated_at = '2026-05-01T00:00:00Z' and \
            ((id = 'n-poison-0' and current_tier = 1 and subscription_status is null) or \
            (id = 'n-poison-1' and current_tier is null and subscription_status = 'billing_issue'))
            """)
        return same == ids.count
    }

    /// Rewrites each racing user's row once after its delay, as a webhook handler would; returns the versions written.
    static func webhookWrites(_ delays: [(String, Int)], client: PostgresClient) async throws -> [String: Int64] {
        try await withThrowingTaskGroup(of: (String, Int64).self) { group in
            for (id, delay) in delays {
                group.addTask {
                    try await Task.sleep(for: .milliseconds(delay))
                    let rows = try await client.query(
                        """
                        update users set current_tier = 1, subscription_status = 'active',
                          subscription_end_date = now() + interval '30 days', updated_at = clock_timestamp()
                        where id = \(id)
                        returning (extract(epoch from updated_at) * 1000000)::bigint
                        """)
                    for try await version in rows.decode(Int64.self) { return (id, version) }
                    return (id, 0)
                }
            }
            var versions: [String: Int64] = [:]
            for try await (id, version) in group { versions[id] = version }
            return versions
        }
    }

    static func onlyRunID(_ h: Harness) async throws -> String {
        var ids: [String] = []
        for try await id in try await h.client.query("select id from reconcile_runs").decode(String.self) { ids.append(id) }
        #expect(ids.count == 1)
        return try #require(ids.first)
    }

    /// The run's drift report, keyed by user id.
    static func report(_ h: Harness, runID: String) throws -> [String: ReportRow] {
        let data = try Data(contentsOf: h.reportDirectory.appendingPathComponent(runID).appendingPathComponent("drift.json"))
        let rows = try JSONDecoder().decode([ReportRow].self, from: data)
        return Dictionary(uniqueKeysWithValues: rows.map { ($0.userID, $0) })
    }

    static func intentKinds(_ id: String, client: PostgresClient) async throws -> [String: Int] {
        var kinds: [String: Int] = [:]
        let rows = try await client.query("select kind from push_intents where user_id = \(id)")
        for try await kind in rows.decode(String.self) { kinds[kind, default: 0] += 1 }
        return kinds
    }

    /// The `updated_at` versions the job read (and replaced) for this user, from its audit rows.
    static func auditBefore(_ id: String, client: PostgresClient) async throws -> Set<Int64> {
        var versions = Set<Int64>()
        let rows = try await client.query(
            "select (before->>'updated_at_micros')::bigint from reconcile_changes where user_id = \(id)")
        for try await version in rows.decode(Int64.self) { versions.insert(version) }
        return versions
    }
}
