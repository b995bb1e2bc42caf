import Foundation
import StoreSimulator
import SubreconCore
import SubreconJob
import SubreconPorts
import SubreconReports
import SubreconTestSupport
import SubreconTestWorld
import Testing

/// Every kind of purchase line passes the same rules (CONTRACT "Whose purchase it is"): a one-time purchase whose store
/// names another buyer never entitles this user (`ownership_conflict`, the row untouched, no intent), whichever store
/// and wherever the store names it; only Apple's token ignores case; a revocation ends its whole line. Real
/// PostgreSQL, the loopback simulators, the job run through `Commands.run`.
@Suite("One-time purchases and the buyer the store names", .serialized)
struct OneTimeBuyerJobTests {
    static let stripeKey = "sk_test_OneTimeBuyerKey0123456789"
    static let product = "pro.lifetime"

    static func stripeRow(_ id: String) -> UserRow {
        UserRow(
            id: id, currentTier: 0, status: "expired", endDate: JobWorld.day(-10), source: "stripe", productID: "prod_lifetime",
            autoRenew: false, identifiers: [.stripe: "cus_\(id)"])
    }

    static func session(_ name: String, metadata: [String: String] = [:], reference: String? = nil) -> SimulatedStripeCheckoutSession {
        var session = SimulatedStripeCheckoutSession(
            id: "cs_\(name)", created: JobWorld.day(-5), paymentIntentID: "pi_\(name)",
            lineItems: [SimulatedStripeLineItem(id: "li_\(name)", priceID: "price_lifetime", productID: "prod_lifetime")])
        session.metadata = metadata
        session.clientReferenceID = reference
        return session
    }

    @Test(
        "Stripe: a paid one-time session whose customer, session metadata or client_reference_id names another user never restores; the own id does; case matters",
        arguments: JobWorld.backends)
    func stripe(_ backend: WorldBackend) async throws {
        let stripe = StripeSimulator(apiKey: Self.stripeKey)
        let variables = ["STRIPE_API_KEY": Self.stripeKey, "STRIPE_BASE_URL": "{base}"]
        try await JobWorld.with(backend, revenueCat: false, routes: [stripe], extra: variables) { h in
            try await h.db.upsertProducts([.init(productID: "prod_lifetime", tier: 3)])
            let ids = ["s-customer-other", "s-meta-other", "s-ref-other", "s-ref-own", "s-upper", "s-blank"]
            try await h.db.insertUsers(ids.map(Self.stripeRow) + [Self.stripeRow("s-someone")])
            await stripe.setCustomerMetadata(["user_id": "s-someone"], forCustomer: "cus_s-customer-other")
            let sessions: [String: SimulatedStripeCheckoutSession] = [
                "s-customer-other": Self.session("s-customer-other"),
                "s-meta-other": Self.session("s-meta-other", metadata: ["user_id": "s-someone"]),
                "s-ref-other": Self.session("s-ref-other", reference: "s-someone"),
                "s-ref-own": Self.session("s-ref-own", reference: "s-ref-own"),
                "s-upper": Self.session("s-upper", metadata: ["user_id": "S-UPPER"]),
                "s-blank": Self.session("s-blank", metadata: ["user_id": "   "]),
            ]
            for (id, session) in sessions {
                await stripe.setCheckoutSessions([session], forCustomer: "cus_\(id)")
                await stripe.addCharges([
                    SimulatedStripeCharge(
                        id: "ch_\(id)", paymentIntentID: "pi_\(id)", amount: 4999, amountRefunded: 0, created: JobWorld.day(-5), refunds: []
                    )
                ])
            }
            let result = try await h.run {
                $0.userIDs = ids
                $0.mode = .backfill
                $0.maxDowngradeRatio = 1
            }
            let report = try h.report(result)
            for id in ["s-customer-other", "s-meta-other", "s-ref-other", "s-upper"] {
                let row = try #require(try await h.user(id))
                #expect(row.currentTier == 0 && row.statusText == "expired", "\(id): another buyer's purchase never restores")
                #expect(report[id]?.action == "skipped" && report[id]?.drift == ["ownership_conflict"], "\(id)")
                #expect(report[id]?.pushIntent == [], "\(id): no intent")
                let (intents, audits) = (try await h.intents(id), try await h.auditRows(id))
                #expect(intents == 0 && audits == 0, "\(id)")
            }
            for id in ["s-ref-own", "s-blank"] {
                let row = try #require(try await h.user(id))
                #expect(row.currentTier == 3 && row.endDate == nil, "\(id): the own purchase (or one naming nobody) restores")
                #expect(report[id]?.action == "restore", "\(id)")
            }
            for id in ["s-ref-own", "s-blank"] {
                let (intents, audits) = (try await h.intents(id), try await h.auditRows(id))
                #expect(audits == 1 && intents == 1, "\(id): one audit row and one intent per change")
            }
        }
    }

    static func googleRow(_ id: String) -> UserRow {
        UserRow(
            id: id, currentTier: 0, status: "expired", endDate: JobWorld.day(-10), source: "google_iap", productID: product,
            autoRenew: false, identifiers: [.googlePlay: "tok-" + id])
    }

    @Test(
        "Google: a one-time product whose obfuscatedExternalAccountId names another user never restores; the own id does",
        arguments: JobWorld.backends)
    func google(_ backend: WorldBackend) async throws {
        let account = try GoogleTestServiceAccount.generate(tokenURI: "{base}/token")
        let google = GooglePlaySimulator(account: account, packageName: GoogleWorld.package)
        try await JobWorld.with(backend, revenueCat: false, routes: [google], extra: GoogleWorld.environment(account)) { h in
            try await h.db.upsertProducts([.init(productID: Self.product, tier: 3)])
            let cases: [(String, String?)] = [("g-other", "g-someone"), ("g-own", "g-own"), ("g-case", "G-CASE"), ("g-none", nil)]
            try await h.db.insertUsers(cases.map { Self.googleRow($0.0) } + [Self.googleRow("g-someone")])
            for (id, buyer) in cases {
                var product = SimulatedPlayProduct(
                    productID: Self.product, purchaseState: 0, purchaseTime: JobWorld.day(-40), orderID: "GPA.\(id)")
                product.obfuscatedAccountID = buyer
                await google.setProduct(product, token: "tok-" + id)
            }
            let result = try await h.run {
                $0.userIDs = cases.map(\.0)
                $0.mode = .backfill
                $0.maxDowngradeRatio = 1
            }
            let report = try h.report(result)
            for id in ["g-other", "g-case"] {
                #expect(try await h.user(id)?.currentTier == 0, "\(id)")
                #expect(report[id]?.drift == ["ownership_conflict"], "\(id): only Apple's token ignores case")
            }
            for id in ["g-own", "g-none"] {
                #expect(try await h.user(id)?.currentTier == 3, "\(id)")
                #expect(report[id]?.action == "restore", "\(id)")
            }
        }
    }

    static let ownToken = "6f1c1e0a-2b9d-4c1e-9a55-0f6f3d1c2b7a"

    static func appleRow(_ id: String, tier: Int, txn: String) -> UserRow {
        UserRow(
            id: id, currentTier: tier, status: tier == 0 ? "expired" : "active", endDate: tier == 0 ? JobWorld.day(-10) : nil,
            source: "apple_iap", productID: product, originalTransactionID: txn, autoRenew: false)
    }

    @Test(
        "Apple: a non-consumable naming another appAccountToken never restores, the own token in upper case does; a revoked line stays revoked whatever a later restore transaction says",
        arguments: JobWorld.backends)
    func apple(_ backend: WorldBackend) async throws {
        try await JobWorld.with(backend, apple: true, revenueCat: false) { h in
            try await h.db.upsertProducts([.init(productID: Self.product, tier: 3)])
            var own = Self.appleRow("a-own", tier: 0, txn: "7001")
            own.accountToken = Self.ownToken
            let rows = [
                Self.appleRow("a-other", tier: 0, txn: "7000"), own, Self.appleRow("a-revoked", tier: 3, txn: "7002"),
            ]
            try await h.db.insertUsers(rows)
            var other = AppleNonConsumableScenario(originalTransactionID: "7000", productID: Self.product, purchaseDate: JobWorld.day(-40))
            other.appAccountToken = "0b7e3c1d-0000-4000-8000-000000000001"
            await h.appStore.addNonConsumable(other)
            var mine = AppleNonConsumableScenario(originalTransactionID: "7001", productID: Self.product, purchaseDate: JobWorld.day(-40))
            mine.appAccountToken = Self.ownToken.uppercased()
            await h.appStore.addNonConsumable(mine)
            await h.appStore.addNonConsumable(
                AppleNonConsumableScenario(
                    originalTransactionID: "7002", productID: Self.product, purchaseDate: JobWorld.day(-40),
                    revocationDate: JobWorld.day(-2))
            )
            await h.appStore.addNonConsumable(
                AppleNonConsumableScenario(
                    originalTransactionID: "7002", transactionID: "7003", productID: Self.product, purchaseDate: JobWorld.day(-1)))
            let result = try await h.run {
                $0.userIDs = rows.map(\.id)
                $0.mode = .backfill
                $0.maxDowngradeRatio = 1
            }
            let report = try h.report(result)
            #expect(try await h.user("a-other")?.currentTier == 0)
            #expect(report["a-other"]?.drift == ["ownership_conflict"])
            #expect(try await h.user("a-own")?.currentTier == 3, "Apple's token is a UUID compared without case")
            let revoked = try #require(try await h.user("a-revoked"))
            #expect(revoked.currentTier == 0 && revoked.statusText == "refunded", "a revocation is a fact about the whole line")
            #expect(report["a-revoked"]?.pushIntent == ["refunded"])
        }
    }
}
