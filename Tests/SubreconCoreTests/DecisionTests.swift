import Foundation
import SubreconCore
import Testing

/// Fixed instant the tables judge by.
let T = Date(timeIntervalSince1970: 1_790_000_000)  // 2026-09-21T14:13:20Z
func days(_ n: Double) -> Date { T.addingTimeInterval(n * 86_400) }

let catalog = ProductCatalog([
    .init(productID: "premium_monthly", tier: 1, entitlement: "premium"),
    .init(productID: "pro_monthly", tier: 2, entitlement: "pro"),
    .init(productID: "pro_annual", tier: 2, entitlement: "pro"),
    .init(productID: "lifetime", tier: 2, entitlement: "pro"),
    .init(productID: "gp_premium", tier: 1, entitlement: "premium"),
])
let context = DecisionContext(asOf: T, environment: .production, catalog: catalog)

func sub(
    _ product: String = "premium_monthly", store: StoreKind = .appStore, sandbox: Bool? = false, purchased: Double? = -30,
    expires: Double?, grace: Double? = nil, refunded: Double? = nil, billingIssue: Double? = nil, autoRenew: Bool? = true,
    paused: Bool = false, lifetime: Bool = false, kind: PurchaseKind? = nil, state: StoreState? = nil, txn: String? = nil
) -> PurchaseFact {
    PurchaseFact(
        productID: product, store: store, kind: kind ?? (lifetime ? .nonExpiring : .subscription), isSandbox: sandbox,
        purchaseDate: purchased.map(days), expiresDate: expires.map(days), gracePeriodExpiresDate: grace.map(days),
        refundedAt: refunded.map(days), billingIssueDetectedAt: billingIssue.map(days), autoRenew: autoRenew, isPaused: paused,
        storeState: state, storeTransactionID: txn, price: Money(amount: 9.99, currency: "usd"), line: nil, buyer: .unstated)
}

func row(tier: Int, status: String, end: Double?, grace: Double? = nil, product: String? = "premium_monthly", autoRenew: Bool? = true)
    -> UserRow
{
    UserRow(
        id: "u1", currentTier: tier, status: status, endDate: end.map(days), graceEndsAt: grace.map(days),
        source: "apple_iap", productID: product, autoRenew: autoRenew, updatedAtMicros: 1)
}

@Suite("Per-purchase judgement at T (CONTRACT 'Sources and the decision')")
struct JudgeTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        let purchase: PurchaseFact
        /// nil: the stated facts cannot decide the purchase (unknown).
        let entitled: Bool?
        var status: SubscriptionStatus? = nil
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(name: "refunded before T", purchase: sub(expires: 10, refunded: -1), entitled: false, status: .refunded),
        Case(name: "refunded exactly at T", purchase: sub(expires: 10, refunded: 0), entitled: false, status: .refunded),
        Case(name: "refund after T is not yet a refund", purchase: sub(expires: 10, refunded: 1), entitled: true, status: .active),
        Case(name: "expires after T, renewing", purchase: sub(expires: 10), entitled: true, status: .active),
        Case(name: "expires after T, auto-renew off", purchase: sub(expires: 10, autoRenew: false), entitled: true, status: .canceled),
        Case(name: "expires after T, auto-renew unknown", purchase: sub(expires: 10, autoRenew: nil), entitled: true, status: .active),
        Case(
            name: "expires after T with billing issue", purchase: sub(expires: 10, billingIssue: -1), entitled: true, status: .billingIssue),
        Case(
            name: "billing issue detected after T is ignored", purchase: sub(expires: 10, billingIssue: 2), entitled: true, status: .active),
        Case(name: "expires exactly at T is over", purchase: sub(expires: 0), entitled: false, status: .expired),
        Case(
            name: "expired, grace ends after T", purchase: sub(expires: -2, grace: 3, billingIssue: -2), entitled: true,
            status: .billingIssue),
        Case(name: "expired, grace over", purchase: sub(expires: -20, grace: -5, billingIssue: -20), entitled: false, status: .expired),
        Case(name: "expired and paused", purchase: sub(expires: -3, paused: true), entitled: false, status: .paused),
        Case(name: "paused but period still running", purchase: sub(expires: 3, paused: true), entitled: true, status: .active),
        Case(name: "plain expiry", purchase: sub(expires: -1), entitled: false, status: .expired),
        Case(name: "lifetime", purchase: sub("lifetime", expires: nil, autoRenew: nil, lifetime: true), entitled: true, status: .active),
        Case(
            name: "lifetime refunded", purchase: sub("lifetime", expires: nil, refunded: -3, lifetime: true), entitled: false,
            status: .refunded),
        // Evidence is explicit: nothing missing is taken for a default.
        Case(name: "subscription without expiry is unknown, never lifetime", purchase: sub(expires: nil), entitled: nil),
        Case(
            name: "non-renewing pass without expiry is unknown", purchase: sub(expires: nil, kind: .nonRenewing), entitled: nil),
        Case(
            name: "non-renewing pass ends at its expiry", purchase: sub(expires: -1, kind: .nonRenewing), entitled: false, status: .expired),
        Case(name: "non-renewing pass running", purchase: sub(expires: 5, kind: .nonRenewing), entitled: true, status: .active),
        Case(name: "one-time purchase of unstated kind is unknown", purchase: sub(expires: nil, kind: .unstated), entitled: nil),
        Case(
            name: "refund before this period's start does not revoke it", purchase: sub(purchased: -3, expires: 27, refunded: -10),
            entitled: true, status: .active),
        Case(
            name: "refund inside this period revokes it", purchase: sub(purchased: -3, expires: 27, refunded: -2), entitled: false,
            status: .refunded),
        Case(
            name: "refund with no period start stated is unknown", purchase: sub(purchased: nil, expires: 27, refunded: -2), entitled: nil),
        // Apple's status is evidence on its own.
        Case(
            name: "status 4 (billing grace) without renewal info entitles", purchase: sub(expires: -2, autoRenew: nil, state: .gracePeriod),
            entitled: true, status: .billingIssue),
        Case(
            name: "status 4 with a grace end before T is over", purchase: sub(expires: -20, grace: -1, state: .gracePeriod),
            entitled: false, status: .expired),
        Case(name: "status 4 without any expiry is unknown", purchase: sub(expires: nil, state: .gracePeriod), entitled: nil),
        Case(
            name: "status 5 (revoked) without a revocation date", purchase: sub(expires: 20, state: .revoked), entitled: false,
            status: .refunded),
        Case(name: "status 2 (expired) without an expiry", purchase: sub(expires: nil, state: .expired), entitled: false, status: .expired),
        Case(
            name: "status 3 (billing retry), period over", purchase: sub(expires: -2, state: .billingRetry), entitled: false,
            status: .expired),
        Case(name: "status 1 running", purchase: sub(expires: 20, state: .active), entitled: true, status: .active),
        // Stripe's and Google Play's states (their modules map onto these).
        Case(name: "store says active but the period ended: unknown", purchase: sub(expires: -1, state: .active), entitled: nil),
        Case(
            name: "store says paused (Stripe paused, Google PAUSED)", purchase: sub(expires: 10, state: .paused), entitled: false,
            status: .paused),
        Case(name: "store says pending (never paid)", purchase: sub(expires: 10, state: .pending), entitled: false, status: .expired),
        Case(
            name: "past_due / grace with a running period", purchase: sub(expires: 10, state: .gracePeriod), entitled: true,
            status: .billingIssue),
        Case(
            name: "canceled at period end, still running", purchase: sub(expires: 10, autoRenew: false, state: .active), entitled: true,
            status: .canceled),
    ]

    @Test("judgement", arguments: cases)
    func judgement(_ c: Case) {
        switch Decision.judge(c.purchase, asOf: T) {
        case .known(let j):
            #expect(j.entitled == c.entitled)
            #expect(j.status == c.status)
        case .unknown(let reason):
            #expect(c.entitled == nil, "judged unknown: \(reason)")
            #expect(!reason.isEmpty)
        }
    }
}

@Suite("Per-user decision and drift (CONTRACT 'Sources and the decision', 'Applying', 'Reports')")
struct DecideTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        let row: UserRow
        let facts: SourceFacts
        var environment: StoreEnvironment = .production
        let action: Action
        let drift: [Drift]
        var tier: Int? = nil
        var status: SubscriptionStatus? = nil
        var intents: [PushIntentKind] = []
        var testDescription: String { name }
    }

    static func known(_ purchases: PurchaseFact...) -> SourceFacts {
        SourceFacts(revenueCatKnowsSubscriber: true, revenueCatPurchases: purchases)
    }

    static let cases: [Case] = [
        Case(
            name: "missed expiration downgrades", row: row(tier: 1, status: "active", end: -2),
            facts: known(sub(expires: -2)), action: .downgrade, drift: [.missedExpiration], tier: 0, status: .expired,
            intents: [.expired]),
        Case(
            name: "missed renewal extends the same tier", row: row(tier: 1, status: "active", end: -2),
            facts: known(sub(expires: 28)), action: .extend, drift: [.missedRenewal], tier: 1, status: .active),
        Case(
            name: "recovery after lapse restores", row: row(tier: 0, status: "expired", end: -5),
            facts: known(sub(expires: 25)), action: .restore, drift: [.missedRenewal], tier: 1, status: .active,
            intents: [.restored]),
        Case(
            name: "billing issue entered within grace keeps the tier",
            row: row(tier: 1, status: "active", end: -1),
            facts: known(sub(expires: -1, grace: 15, billingIssue: -1)), action: .statusChange,
            drift: [.billingIssueEntered], tier: 1, status: .billingIssue, intents: [.billingIssue]),
        Case(
            name: "billing issue recovered", row: row(tier: 1, status: "billing_issue", end: -1, grace: 10),
            facts: known(sub(expires: 29)), action: .extend, drift: [.missedRenewal, .billingIssueRecovered], tier: 1,
            status: .active),
        Case(
            name: "grace expired downgrades", row: row(tier: 1, status: "billing_issue", end: -20, grace: -4),
            facts: known(sub(expires: -20, grace: -4, billingIssue: -20)), action: .downgrade, drift: [.graceExpired],
            tier: 0, status: .expired, intents: [.expired]),
        Case(
            name: "missed refund revokes", row: row(tier: 1, status: "active", end: 10),
            facts: known(sub(expires: 10, refunded: -1)), action: .downgrade, drift: [.missedRefund], tier: 0,
            status: .refunded, intents: [.refunded]),
        Case(
            name: "refund noticed for an already expired row", row: row(tier: 0, status: "expired", end: -3),
            facts: known(sub(expires: -3, refunded: -4)), action: .statusChange, drift: [.missedRefund], tier: 0,
            status: .refunded),
        Case(
            name: "product change to a higher tier upgrades", row: row(tier: 1, status: "active", end: -1),
            facts: known(sub(expires: -1), sub("pro_annual", purchased: -1, expires: 364)), action: .upgrade,
            drift: [.missedRenewal, .productChange], tier: 2, status: .active),
        Case(
            name: "highest tier wins over a later lower tier", row: row(tier: 2, status: "active", end: -1, product: "pro_monthly"),
            facts: known(sub("premium_monthly", expires: 60), sub("pro_monthly", expires: 5)), action: .extend,
            drift: [.missedRenewal], tier: 2, status: .active),
        Case(
            name: "tie on tier: later end wins", row: row(tier: 2, status: "active", end: -1, product: "pro_monthly"),
            facts: known(sub("pro_monthly", expires: 20), sub("pro_annual", expires: 300)), action: .extend,
            drift: [.missedRenewal, .productChange], tier: 2, status: .active),
        Case(
            name: "lifetime purchase entitles", row: row(tier: 2, status: "expired", end: -1, product: "lifetime"),
            facts: known(sub("lifetime", expires: nil, autoRenew: nil, lifetime: true)), action: .statusChange, drift: [],
            tier: 2, status: .active),
        Case(
            name: "sandbox purchase never entitles in production", row: row(tier: 1, status: "active", end: -1),
            facts: known(sub(sandbox: true, expires: 20)), action: .downgrade, drift: [.missedExpiration, .sandboxIgnored],
            tier: 0, status: .expired, intents: [.expired]),
        Case(
            name: "sandbox purchase entitles in a sandbox run", row: row(tier: 1, status: "active", end: -1),
            facts: known(sub(sandbox: true, expires: 20)), environment: .sandbox, action: .extend, drift: [.missedRenewal],
            tier: 1, status: .active),
        Case(
            name: "unknown entitled product is skipped", row: row(tier: 1, status: "active", end: -1),
            facts: known(sub("mystery_product", expires: 20)), action: .skipped, drift: [.unknownProduct]),
        Case(
            name: "unknown expired product does not block", row: row(tier: 1, status: "active", end: -1),
            facts: known(sub(expires: -1), sub("mystery_product", purchased: -90, expires: -60)), action: .downgrade,
            drift: [.missedExpiration], tier: 0, status: .expired, intents: [.expired]),
        Case(
            name: "unknown at source never downgrades", row: row(tier: 1, status: "active", end: -1),
            facts: SourceFacts(revenueCatKnowsSubscriber: false, revenueCatPurchases: []), action: .skipped, drift: [.unknownAtSource]),
        Case(
            name: "fetch error leaves the row", row: row(tier: 1, status: "active", end: -1),
            facts: .failed(SourceError(origin: .revenueCat, kind: .fetch, message: "HTTP 500")), action: .skipped,
            drift: [.fetchError]),
        Case(
            name: "verification failure leaves the row", row: row(tier: 1, status: "active", end: -1),
            facts: SourceFacts(
                revenueCatKnowsSubscriber: true, revenueCatPurchases: [sub(expires: -1)],
                errors: [SourceError(origin: .appStore, kind: .verification, message: "bad chain")]),
            action: .skipped, drift: [.verificationFailed]),
        Case(
            name: "in sync", row: row(tier: 1, status: "billing_issue", end: -1, grace: 5),
            facts: known(sub(expires: -1, grace: 5, billingIssue: -1)), action: .none, drift: [.inSync], tier: 1,
            status: .billingIssue),
        Case(
            name: "auto-renew turned off is a status change", row: row(tier: 1, status: "active", end: 5),
            facts: known(sub(expires: 5, autoRenew: false)), action: .statusChange, drift: [], tier: 1, status: .canceled),
        Case(
            name: "paused most recent subscription", row: row(tier: 1, status: "active", end: -3, product: "gp_premium"),
            facts: known(sub("gp_premium", store: .playStore, expires: -3, paused: true)), action: .downgrade,
            drift: [.missedExpiration], tier: 0, status: .paused),
        Case(
            name: "refunded most recent, older expired", row: row(tier: 1, status: "active", end: 10),
            facts: known(sub(purchased: -60, expires: -30), sub(purchased: -2, expires: 28, refunded: -1)),
            action: .downgrade, drift: [.missedRefund], tier: 0, status: .refunded, intents: [.refunded]),
        Case(
            name: "expired lapsed user still expired is in sync", row: row(tier: 0, status: "expired", end: -10),
            facts: known(sub(expires: -10)), action: .none, drift: [.inSync], tier: 0, status: .expired),
        // Fail closed: incomplete evidence never changes a tier.
        Case(
            name: "subscription without expiry cannot downgrade", row: row(tier: 1, status: "active", end: -1),
            facts: known(sub(expires: nil)), action: .skipped, drift: [.fetchError]),
        Case(
            name: "subscription without expiry cannot restore, and is reported", row: row(tier: 0, status: "expired", end: -10),
            facts: known(sub(expires: nil)), action: .skipped, drift: [.fetchError]),
        Case(
            name: "pass without expiry is never restored as lifetime", row: row(tier: 0, status: "expired", end: -10),
            facts: known(sub(expires: nil, kind: .nonRenewing)), action: .skipped, drift: [.fetchError]),
        Case(
            name: "unknown sandbox flag on an entitled purchase cannot restore", row: row(tier: 0, status: "expired", end: -10),
            facts: known(sub(sandbox: nil, expires: 20)), action: .skipped, drift: [.fetchError]),
        Case(
            name: "unknown sandbox flag on an entitled purchase cannot downgrade", row: row(tier: 1, status: "active", end: -1),
            facts: known(sub(expires: -1), sub("premium_monthly", sandbox: nil, purchased: -1, expires: 29)), action: .skipped,
            drift: [.fetchError]),
        Case(
            name: "unknown evidence of a lower tier still blocks a downgrade below it",
            row: row(tier: 2, status: "active", end: -1, product: "pro_monthly"),
            facts: known(sub("pro_monthly", expires: -1), sub("premium_monthly", expires: nil)), action: .skipped,
            drift: [.fetchError]),
        Case(
            name: "unknown evidence of a higher tier does not block an upgrade", row: row(tier: 1, status: "active", end: -1),
            facts: known(sub("pro_annual", purchased: -1, expires: 364), sub("lifetime", expires: nil, kind: .unstated)),
            action: .upgrade, drift: [.missedRenewal, .productChange], tier: 2, status: .active),
        Case(
            name: "a refund of an earlier period does not revoke the running one", row: row(tier: 1, status: "active", end: 27),
            facts: known(sub(purchased: -3, expires: 27, refunded: -10)), action: .none, drift: [.inSync], tier: 1),
        Case(
            name: "Apple billing grace without renewal info keeps the tier", row: row(tier: 1, status: "active", end: -2),
            facts: known(sub(expires: -2, autoRenew: nil, state: .gracePeriod)), action: .statusChange,
            drift: [.billingIssueEntered], tier: 1, status: .billingIssue, intents: [.billingIssue]),
        Case(
            name: "Apple revoked without a date revokes", row: row(tier: 1, status: "active", end: 20),
            facts: known(sub(expires: 20, state: .revoked)), action: .downgrade, drift: [.missedRefund], tier: 0,
            status: .refunded, intents: [.refunded]),
    ]

    @Test("verdict", arguments: cases)
    func verdict(_ c: Case) {
        let ctx = DecisionContext(asOf: T, environment: c.environment, catalog: catalog)
        let verdict = Decision.decide(row: c.row, facts: c.facts, context: ctx)
        #expect(verdict.action == c.action)
        #expect(verdict.drift == c.drift)
        if let tier = c.tier { #expect(verdict.truth?.tier == tier) }
        if let status = c.status { #expect(verdict.truth?.status == status) }
        #expect(verdict.intents.map(\.kind) == c.intents)
        if c.action == .skipped { #expect(verdict.truth == nil && verdict.intents.isEmpty) }
    }

    @Test("grace end and source are written for a billing-issue truth")
    func graceWritten() throws {
        let v = Decision.decide(
            row: row(tier: 1, status: "active", end: -1), facts: Self.known(sub(expires: -1, grace: 15, billingIssue: -1)),
            context: context)
        let truth = try #require(v.truth)
        #expect(truth.graceEndsAt == days(15))
        #expect(truth.source == "apple_iap")
        #expect(truth.endDate == days(-1))
    }

    @Test("Google base-plan product ids fall back to the subscription id")
    func googleBasePlan() {
        #expect(catalog.tier(for: "gp_premium:monthly") == 1)
        #expect(catalog.tier(for: "gp_other:monthly") == nil)
    }

    @Test("dedupe key names user, kind and period, so a rerun queues nothing new")
    func dedupeKey() {
        let a = Decision.decide(row: row(tier: 1, status: "active", end: -2), facts: Self.known(sub(expires: -2)), context: context)
        let b = Decision.decide(row: row(tier: 1, status: "active", end: -2), facts: Self.known(sub(expires: -2)), context: context)
        #expect(a.intents.map(\.dedupeKey) == b.intents.map(\.dedupeKey))
        #expect(a.intents.first?.dedupeKey == "u1|expired|\(ISO8601.string(days(-2)))")
    }
}

@Suite("Apple overrides RevenueCat (CONTRACT 'Sources and the decision')")
struct MergeTests {
    @Test("Apple's view replaces RevenueCat's and a disagreement is a source conflict")
    func appleOverrides() throws {
        let rc = sub(expires: -3, txn: "1000")  // RevenueCat: lapsed
        var apple = sub(expires: 27, txn: "1003")  // Apple: renewed
        apple.origin = .appStore
        apple.originalTransactionID = "1000"
        let facts = SourceFacts(
            revenueCatKnowsSubscriber: true, revenueCatPurchases: [rc],
            stores: [StoreFact(lookupID: "1000", purchase: apple)])
        let v = Decision.decide(row: row(tier: 1, status: "active", end: -3), facts: facts, context: context)
        #expect(v.action == .extend)
        #expect(v.drift == [.missedRenewal, .sourceConflict])
        #expect(v.truth?.originalTransactionID == "1000")
        #expect(v.conflicts.count == 1)
        #expect(v.conflicts.first?.revenueCat.entitled == false)
        #expect(v.conflicts.first?.storeView.entitled == true)
    }

    @Test("agreeing sources are no conflict")
    func agreeing() {
        var apple = sub(expires: -3, txn: "1000")
        apple.origin = .appStore
        let facts = SourceFacts(
            revenueCatKnowsSubscriber: true, revenueCatPurchases: [sub(expires: -3, txn: "1000")],
            stores: [StoreFact(lookupID: "1000", purchase: apple)])
        let v = Decision.decide(row: row(tier: 1, status: "active", end: -3), facts: facts, context: context)
        #expect(v.conflicts.isEmpty)
        #expect(v.drift == [.missedExpiration])
    }

    @Test("Apple evidence counts when RevenueCat does not know the subscriber")
    func appleOnly() {
        var apple = sub(expires: 20, txn: "1000")
        apple.origin = .appStore
        let facts = SourceFacts(
            revenueCatKnowsSubscriber: false, revenueCatPurchases: [], stores: [StoreFact(lookupID: "1000", purchase: apple)])
        let v = Decision.decide(row: row(tier: 1, status: "active", end: -3), facts: facts, context: context)
        #expect(v.action == .extend)
    }
}

@Suite("RevenueCat entitlements as evidence (CONTRACT 'Sources and the decision')")
struct EntitlementEvidenceTests {
    static func oneTime(_ product: String, purchased: Double, sandbox: Bool? = false) -> PurchaseFact {
        sub(product, purchased: purchased, expires: nil, autoRenew: nil, kind: .unstated)
    }

    static func facts(_ purchases: [PurchaseFact], _ entitlements: [EntitlementFact]) -> SourceFacts {
        SourceFacts(revenueCatKnowsSubscriber: true, revenueCatPurchases: purchases, revenueCatEntitlements: entitlements)
    }

    @Test("an active entitlement that names no product never lowers a tier")
    func unnamedEntitlement() {
        let facts = Self.facts(
            [sub(expires: -5)], [EntitlementFact(identifier: "premium", productID: nil, expires: .at(days(20)))])
        let v = Decision.decide(row: row(tier: 1, status: "active", end: -5), facts: facts, context: context)
        #expect(v.action == .skipped)
        #expect(v.drift == [.fetchError])
        #expect(v.truth == nil && v.intents.isEmpty)
        #expect(v.error == .unnamedEntitlement("premium"))
        #expect(v.error?.description.contains("product_identifier") == true)
    }

    @Test("an expired entitlement that names no product does not block")
    func unnamedExpiredEntitlement() {
        let facts = Self.facts(
            [sub(expires: -5)], [EntitlementFact(identifier: "premium", productID: nil, expires: .at(days(-5)))])
        let v = Decision.decide(row: row(tier: 1, status: "active", end: -5), facts: facts, context: context)
        #expect(v.action == .downgrade)
    }

    @Test("a non-subscription whose entitlement says expires_date null is non-expiring")
    func lifetimeByEntitlement() {
        let facts = Self.facts(
            [Self.oneTime("lifetime", purchased: -100)], [EntitlementFact(identifier: "pro", productID: "lifetime", expires: .never)])
        let v = Decision.decide(row: row(tier: 0, status: "expired", end: -10, product: nil), facts: facts, context: context)
        #expect(v.action == .restore)
        #expect(v.truth?.tier == 2 && v.truth?.endDate == nil)
    }

    @Test("an expired 30-day pass ends at its entitlement's expiry and is never restored as lifetime")
    func expiredPass() {
        let facts = Self.facts(
            [Self.oneTime("premium_monthly", purchased: -40)],
            [EntitlementFact(identifier: "premium", productID: "premium_monthly", expires: .at(days(-10)))])
        let v = Decision.decide(row: row(tier: 0, status: "expired", end: -10), facts: facts, context: context)
        #expect(v.action == .none)
        #expect(v.truth?.tier == 0)
        let held = Decision.decide(row: row(tier: 1, status: "active", end: -10), facts: facts, context: context)
        #expect(held.action == .downgrade)
        #expect(held.truth?.endDate == days(-10))
    }

    @Test("a running pass entitles until its entitlement's expiry; an older purchase of it ended no later")
    func runningPass() {
        let facts = Self.facts(
            [Self.oneTime("premium_monthly", purchased: -70), Self.oneTime("premium_monthly", purchased: -5)],
            [EntitlementFact(identifier: "premium", productID: "premium_monthly", expires: .at(days(25)))])
        let v = Decision.decide(row: row(tier: 0, status: "expired", end: -40), facts: facts, context: context)
        #expect(v.action == .restore)
        #expect(v.truth?.endDate == days(25))
    }

    @Test("a non-subscription whose entitlement's expiry key is missing is unknown")
    func unstatedEntitlementExpiry() {
        let facts = Self.facts(
            [Self.oneTime("lifetime", purchased: -100)], [EntitlementFact(identifier: "pro", productID: "lifetime", expires: .unstated)])
        let restore = Decision.decide(row: row(tier: 0, status: "expired", end: -10, product: nil), facts: facts, context: context)
        #expect(restore.action == .skipped && restore.drift == [.fetchError] && restore.truth == nil)
        let downgrade = Decision.decide(row: row(tier: 2, status: "active", end: nil, product: "lifetime"), facts: facts, context: context)
        #expect(downgrade.action == .skipped)
    }

    @Test("an unmapped one-time purchase no entitlement names (a consumable) grants and blocks nothing")
    func consumable() {
        let facts = Self.facts([sub(expires: -5), Self.oneTime("coins_100", purchased: -3)], [])
        let v = Decision.decide(row: row(tier: 1, status: "active", end: -5), facts: facts, context: context)
        #expect(v.action == .downgrade)
    }
}
