import Foundation
import PostgresNIO
import StoreSimulator
import SubreconApp
import SubreconCore
import SubreconDatabase
import SubreconJob
import SubreconPorts
import SubreconReports
import Testing

/// One varied night over real PostgreSQL and the loopback RevenueCat and App Store simulators (CONTRACT "Finance figures"): which
/// price each figure carries, family sharing and trials apart, exact JPY/KWD amounts, and the refund review.
@Suite("Finance night: the right price per figure and the refund review", .serialized, .enabled(if: Harness.isEnabled, Harness.skip))
struct FinanceNightTests {
    static func price(_ amount: String, _ currency: String) -> SimulatedPrice {
        SimulatedPrice(amount: Decimal(string: amount)!, currency: currency)
    }

    static let users = [
        "n-family-refund", "n-apple-intro", "n-rc-trial", "n-jpy-restored", "n-kwd-refund", "n-rc-intro-unknown", "n-serial",
        "n-in-sync",
    ]

    /// Seeds the night: returns nothing, the users are named in the assertions.
    static func seedNight(_ h: Harness) async throws {
        let d = Harness.day
        // A family member's refund: the tier is revoked like any other, but nobody in the household paid.
        try await h.seed(
            h.row("n-family-refund", tier: 1, "active", end: -1),
            SimulatedSubscription(
                productID: "premium_monthly", purchaseDate: d(-5), expiresDate: d(25), refundedAt: d(-0.5),
                ownershipType: "FAMILY_SHARED", storeTransactionID: "fam-1", price: price("9.99", "USD")))
        // An Apple user in billing issue after an introductory offer: paid 0.99, the next renewal is 9.99.
        try await h.seed(
            h.row("n-apple-intro", tier: 1, "active", end: -1, txn: "8001"),
            SimulatedSubscription(
                productID: "premium_monthly", periodType: "intro", purchaseDate: d(-31), expiresDate: d(-1),
                gracePeriodExpiresDate: d(15), billingIssuesDetectedAt: d(-1), storeTransactionID: "8001",
                price: price("0.99", "USD")))
        var intro = AppStoreScenario(
            originalTransactionID: "8001", productID: "premium_monthly", status: 4, purchaseDate: d(-31), expiresDate: d(-1),
            gracePeriodExpiresDate: d(15), isInBillingRetryPeriod: true, price: 990, currency: "USD")
        intro.renewalPrice = 9_990
        intro.offerType = 1
        intro.offerDiscountType = "PAY_AS_YOU_GO"
        await h.appStore.setScenario(intro)
        // A RevenueCat trial user whose tier comes back: restored, but a trial is never revenue.
        try await h.seed(
            h.row("n-rc-trial", tier: 0, "expired", end: -10),
            SimulatedSubscription(
                productID: "premium_monthly", store: "play_store", periodType: "trial", purchaseDate: d(-1), expiresDate: d(6),
                price: price("0", "USD")))
        // A JPY renewal restored and a KWD refund, exact.
        try await h.seed(
            h.row("n-jpy-restored", tier: 0, "expired", end: -20),
            SimulatedSubscription(
                productID: "premium_monthly", store: "play_store", purchaseDate: d(-1), expiresDate: d(29), price: price("1200", "JPY")))
        try await h.seed(
            h.row("n-kwd-refund", tier: 2, "active", end: -1, product: "pro_monthly"),
            SimulatedSubscription(
                productID: "pro_monthly", store: "play_store", purchaseDate: d(-10), expiresDate: d(20), refundedAt: d(-0.2),
                storeTransactionID: "GPA.kwd-1", price: price("3.500", "KWD")))
        // A RevenueCat intro user in billing issue: no stated next price, counted as unknown.
        try await h.seed(
            h.row("n-rc-intro-unknown", tier: 1, "active", end: -1),
            SimulatedSubscription(
                productID: "premium_monthly", store: "play_store", periodType: "intro", purchaseDate: d(-31), expiresDate: d(-1),
                gracePeriodExpiresDate: d(10), billingIssuesDetectedAt: d(-1), price: price("1.99", "EUR")))
        // Three refunds across two stores: one seen on an earlier night, two in tonight's answer.
        try await h.db.refunds.recordRefunds(
            runID: "earlier-night",
            [
                (
                    userID: "n-serial",
                    refund: SeenRefund(store: "app_store", transactionID: "s-0", refundedAt: d(-200), amount: 4.99, currency: "USD")
                )
            ])
        try await h.seed(
            h.row("n-serial", tier: 2, "active", end: -1, product: "pro_monthly"),
            SimulatedSubscription(
                productID: "premium_monthly", purchaseDate: d(-70), expiresDate: d(-40), refundedAt: d(-45), storeTransactionID: "s-1",
                price: price("4.99", "USD")),
            SimulatedSubscription(
                productID: "pro_monthly", store: "play_store", purchaseDate: d(-10), expiresDate: d(20), refundedAt: d(-2),
                storeTransactionID: "GPA.s-2", price: price("9.99", "USD")))
        // Two refunds in the window and one 400 days ago: not listed.
        try await h.db.refunds.recordRefunds(
            runID: "earlier-night",
            [
                (
                    userID: "n-twice",
                    refund: SeenRefund(store: "app_store", transactionID: "t-0", refundedAt: d(-400), amount: nil, currency: nil)
                ),
                (
                    userID: "n-twice",
                    refund: SeenRefund(store: "app_store", transactionID: "t-1", refundedAt: d(-100), amount: nil, currency: nil)
                ),
                (
                    userID: "n-twice",
                    refund: SeenRefund(store: "stripe", transactionID: "t-2", refundedAt: d(-10), amount: nil, currency: nil)
                ),
            ])
        // Extended (a missed renewal of a tier still held): no finance figure, no price.
        try await h.seed(h.row("n-in-sync", tier: 1, "active", end: -1), Harness.subscription(purchased: -1, expires: 29))
    }

    @Test("each figure carries its own price; finance.csv adds up from drift.json; the refund review lists repeat refunders")
    func night() async throws {
        try await Harness.with(apple: true) { h in
            try await Self.seedNight(h)
            let result = try await h.run {
                $0.maxDowngradeRatio = 1
                $0.userIDs = Self.users
            }
            #expect(result.exitStatus == .ok)
            let rows = try h.report(result)

            func price(_ id: String) -> [String?] { [rows[id]?.priceAmount, rows[id]?.priceCurrency, rows[id]?.priceBasis] }
            #expect(price("n-family-refund") == ["0", "USD", "family_shared"])
            #expect(rows["n-family-refund"]?.truthStatus == "refunded" && rows["n-family-refund"]?.truthTier == 0)
            #expect(try await h.user("n-family-refund")?.currentTier == 0, "family shared tiers are revoked like any other")
            #expect(price("n-apple-intro") == ["9.99", "USD", "renewal"], "the next renewal's price, not the intro price paid")
            #expect(rows["n-apple-intro"]?.truthStatus == "billing_issue")
            #expect(rows["n-apple-intro"]?.sources == ["revenuecat", "app_store"], "the renewal price is Apple's signed renewalPrice")
            #expect(price("n-rc-trial") == ["0", "USD", "trial"])
            #expect(rows["n-rc-trial"]?.action == "restore")
            #expect(price("n-jpy-restored") == ["1200", "JPY", "renewal"])
            #expect(price("n-kwd-refund") == ["3.5", "KWD", "paid"])
            #expect(price("n-rc-intro-unknown") == [nil, nil, "unknown"])
            #expect(price("n-serial") == ["9.99", "USD", "paid"])
            #expect(rows["n-in-sync"]?.action == "extend" && price("n-in-sync") == [nil, nil, nil])

            // finance.csv is the sum of the drift.json rows of each category, recomputed here independently.
            let csv = try h.csvLines(result, "finance.csv").dropFirst().filter { !$0.contains(",product_drift,") }
            #expect(Set(csv) == Set(Self.recomputed(from: Array(rows.values), runID: result.summary.runID)))
            #expect(csv.contains("\(result.summary.runID),store_currency,app_store,USD,,billing_issue_at_risk,1,9.99,0"))
            #expect(csv.contains("\(result.summary.runID),store_currency,play_store,JPY,,restored,1,1200,0"))
            #expect(csv.contains("\(result.summary.runID),store_currency,play_store,KWD,,refunds,1,3.5,0"))
            #expect(csv.contains("\(result.summary.runID),family_shared,app_store,USD,,refunds,1,0,0"))
            #expect(csv.contains("\(result.summary.runID),trial,play_store,USD,,restored,1,0,0"))
            #expect(csv.contains("\(result.summary.runID),store_currency,play_store,unknown,,billing_issue_at_risk,1,0,1"))

            let html = try String(contentsOf: result.folder.appendingPathComponent("summary.html"), encoding: .utf8)
            #expect(html.contains("Revenue at risk (their next renewal price)"))
            #expect(html.contains("Refunded value (what they paid)"))
            #expect(html.contains("family shared (not revenue, 0)"))
            #expect(html.contains("Refund review: 1 user with at least 3 refunds within 365 days"))

            // The refund review: n-serial (3 across app_store and play_store), not n-twice (one is 400 days old).
            let review = try h.csvLines(result, "refund_review.csv")
            #expect(
                review == [
                    "user_id,refunds,stores,first_refund,last_refund",
                    "n-serial,3,app_store;play_store,\(ISO8601.string(Harness.day(-200))),\(ISO8601.string(Harness.day(-2)))",
                ])
            #expect(result.summary.refundReview?.users == 1)
            let seen = try await h.count("select count(*)::int from refunds_seen")
            #expect(seen == 1 + 3 + 2 + 2, "earlier nights' 4, tonight's family, KWD and two of n-serial")
            #expect(try await h.count("select count(*)::int from refunds_seen where user_id = 'n-family-refund' and amount = '0'") == 1)
            #expect(
                try await h.count(
                    "select count(*)::int from refunds_seen where user_id = 'n-kwd-refund' and amount = '3.5' and currency = 'KWD'") == 1)

            // A rerun of the same night records no refund twice and lists the same users; the review never acts.
            let intentsBefore = try await h.count("select count(*)::int from push_intents")
            let again = try await h.run {
                $0.maxDowngradeRatio = 1
                $0.userIDs = Self.users
            }
            #expect(try await h.count("select count(*)::int from refunds_seen") == seen)
            #expect(again.summary.refundReview?.newRefunds == 0)
            #expect(try h.csvLines(again, "refund_review.csv") == review)
            #expect(try await h.count("select count(*)::int from push_intents") == intentsBefore)
            #expect(try await h.user("n-twice") == nil, "the review writes no user")
        }
    }

    @Test("a run resumed with --accept-downgrades records no refund twice and lists the same users")
    func resumed() async throws {
        try await Harness.with(apple: true) { h in
            try await Self.seedNight(h)
            let tripped = try await h.run {
                $0.maxDowngradeRatio = 0.1
                $0.userIDs = Self.users
            }
            #expect(tripped.exitStatus == .valveTripped)
            #expect(try await h.count("select count(*)::int from refunds_seen") == 8, "refunds seen are kept even when nothing is applied")
            #expect(try await h.user("n-serial")?.currentTier == 2, "the review changes no tier")
            let review = try h.csvLines(tripped, "refund_review.csv")
            #expect(review.count == 2 && review[1].hasPrefix("n-serial,3,app_store;play_store,"))
            #expect(tripped.summary.refundReview?.newRefunds == 4)

            let accepted = try await Commands.run(
                environment: h.env, options: h.options { $0.acceptDowngrades = true }, logger: h.logger,
                resume: tripped.summary.runID)
            #expect(accepted.exitStatus == .ok)
            #expect(try await h.count("select count(*)::int from refunds_seen") == 8)
            #expect(accepted.summary.refundReview?.newRefunds == 0 && accepted.summary.refundReview?.users == 1)
            #expect(try h.csvLines(accepted, "refund_review.csv") == review)
            #expect(try await h.user("n-serial")?.currentTier == 0, "the refund itself is applied by the tier rules")
            let intents = try await h.count("select count(*)::int from push_intents")
            #expect(intents == (try h.csvLines(accepted, "push_intents.csv").count - 1), "every intent comes from a tier action")
        }
    }

    /// finance.csv's money lines rebuilt from drift.json rows alone (categories from the row's own columns).
    static func recomputed(from rows: [ReportRow], runID: String) -> [String] {
        struct Key: Hashable { var section, store, currency: String }
        var sums: [Key: [String: (count: Int, value: Decimal, unknown: Int)]] = [:]
        for row in rows {
            guard let truthTier = row.truthTier, let status = row.truthStatus else { continue }
            var figures: [String] = []
            if row.dbTier > 0 && truthTier == 0 && status == "refunded" { figures.append("refunds") }
            if truthTier > 0 && status == "billing_issue" { figures.append("billing_issue_at_risk") }
            if row.action == "restore" { figures.append("restored") }
            guard !figures.isEmpty else { continue }
            let section = ["family_shared": "family_shared", "trial": "trial"][row.priceBasis ?? ""] ?? "store_currency"
            let key = Key(section: section, store: row.store ?? "unknown", currency: row.priceCurrency ?? "unknown")
            for figure in ["refunds", "billing_issue_at_risk", "restored"] {
                var sum = sums[key, default: [:]][figure] ?? (0, 0, 0)
                if figures.contains(figure) {
                    sum.count += 1
                    if let amount = row.priceAmount.flatMap({ Decimal(string: $0) }) { sum.value += amount } else { sum.unknown += 1 }
                }
                sums[key, default: [:]][figure] = sum
            }
        }
        return sums.flatMap { key, figures in
            figures.map { figure, sum in
                "\(runID),\(key.section),\(key.store),\(key.currency),,\(figure),\(sum.count),\(FinanceCSV.decimalString(sum.value)),\(sum.unknown)"
            }
        }
    }
}
