import Crypto
import Foundation
import StoreSimulator
import SubreconCore

/// RevenueCat and the App Store Server API on loopback, seeded with the benchmark's candidates, with the
/// configured latency and rate limit; plus the environment a `subrecon run` needs to talk to them.
struct BenchSimulator {
    let revenueCat: RevenueCatSimulator
    let appStore: AppStoreSimulator
    let server: SimulatorServer
    /// `REVENUECAT_*` and `APP_STORE_*` for the job (App Store ones only when `withApple`).
    let environment: [String: String]

    static let bundleID = "com.example.subrecon.bench"

    static func start(
        candidates: [BenchCandidate], asOf: Date, latency: Duration, rateLimit: Double, withApple: Bool, directory: URL
    ) async throws -> BenchSimulator {
        let apiKey = "sk_bench_" + String(UInt64.random(in: 0...UInt64.max), radix: 36)
        let appleKey = P256.Signing.PrivateKey()
        let pki = try AppleTestPKI.generate(now: asOf)
        let revenueCat = RevenueCatSimulator(
            apiKey: apiKey, productEntitlements: [BenchDatabase.product: BenchDatabase.entitlement])
        let appStore = try AppStoreSimulator(
            pki: pki, apiPublicKey: appleKey.publicKey, issuerID: "00000000-bench-issuer", keyID: "BENCHKEY01",
            bundleID: bundleID)
        await revenueCat.setClock(asOf)
        await revenueCat.setLatency(latency)
        await appStore.setLatency(latency)
        if rateLimit > 0 {
            await revenueCat.setRequestsPerSecond(rateLimit)
            await appStore.setRequestsPerSecond(rateLimit)
        }
        for candidate in candidates {
            let purchase = asOf.addingTimeInterval(candidate.renewed ? -86_400 : -31 * 86_400)
            let expires = asOf.addingTimeInterval(candidate.renewed ? 29 * 86_400 : -86_400)
            let subscription = SimulatedSubscription(
                productID: BenchDatabase.product, store: candidate.isAppStore ? "app_store" : "stripe",
                purchaseDate: purchase, expiresDate: expires,
                storeTransactionID: candidate.isAppStore ? candidate.transactionID : "sub_\(candidate.index)",
                price: SimulatedPrice(amount: 9.99, currency: "USD"))
            await revenueCat.setSubscriber(
                SimulatedSubscriber(originalAppUserID: candidate.id, firstSeen: purchase, subscriptions: [subscription]),
                for: candidate.id)
            if candidate.isAppStore {
                await appStore.setScenario(
                    AppStoreScenario(
                        originalTransactionID: candidate.transactionID, productID: BenchDatabase.product,
                        status: candidate.renewed ? 1 : 2, bundleID: bundleID, purchaseDate: purchase, expiresDate: expires,
                        autoRenew: candidate.renewed, price: 9990, currency: "USD"))
            }
        }
        let server = try await SimulatorServer.start(routes: [revenueCat, appStore])
        var environment = ["REVENUECAT_API_KEY": apiKey, "REVENUECAT_BASE_URL": server.baseURL]
        if withApple {
            let rootFile = directory.appendingPathComponent("simulator-root.pem")
            try Data(try pki.rootPEM().utf8).write(to: rootFile)
            environment.merge([
                "APP_STORE_ISSUER_ID": "00000000-bench-issuer",
                "APP_STORE_KEY_ID": "BENCHKEY01",
                "APP_STORE_PRIVATE_KEY": appleKey.pemRepresentation,
                "APP_STORE_BUNDLE_ID": bundleID,
                "APP_STORE_BASE_URL": server.baseURL,
                "APP_STORE_ROOT_CERTIFICATES": rootFile.path,
            ]) { $1 }
        }
        return BenchSimulator(revenueCat: revenueCat, appStore: appStore, server: server, environment: environment)
    }

    /// What the simulator saw since the last reset, checked against "exactly one RevenueCat call per candidate and
    /// one Apple call per App Store candidate".
    func observe(candidates: ArraySlice<BenchCandidate>, withApple: Bool) async -> SimulatorObservation {
        let rc = await revenueCat.counters(reset: true)
        let apple = await appStore.requestCounts()
        let appleLimited = await appStore.rateLimitedAnswers()
        await appStore.resetCounters()
        var observation = SimulatorObservation()
        observation.revenueCatRequests = rc.totalRequests
        observation.appStoreRequests = apple.values.reduce(0, +)
        observation.rateLimited = rc.rateLimitedAnswers + appleLimited
        observation.concurrentSameUser = rc.concurrentSameUserRequests
        let expectedApple = withApple ? candidates.filter(\.isAppStore) : []
        observation.exactlyOnce =
            rc.requestsPerUser.count == candidates.count && candidates.allSatisfy { rc.requestsPerUser[$0.id] == 1 }
            && apple.count == expectedApple.count && expectedApple.allSatisfy { apple[$0.transactionID] == 1 }
        observation.appStoreCandidates = expectedApple.count
        return observation
    }
}

struct SimulatorObservation: Sendable {
    var revenueCatRequests = 0
    var appStoreRequests = 0
    var rateLimited = 0
    var concurrentSameUser = 0
    var exactlyOnce = false
    var appStoreCandidates = 0
}
