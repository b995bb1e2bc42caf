import Crypto
import Foundation
import Logging
import StoreSimulator
import SubreconCore
import SubreconJob
import SubreconPorts
import SubreconReports

/// One world a job test runs in: a database (`WorldDatabase`, in memory or PostgreSQL), the loopback store
/// simulators speaking the stores' wire formats, an environment pointing at both and a report folder. The same test
/// runs in either backend (docs/ARCHITECTURE.md, "Tests and checks"): the job's rules in the unit lane, and through
/// PostgreSQL in the full run.
public struct JobWorld: Sendable {
    public static let asOf = ISO8601.date("2026-06-01T03:00:00Z")!
    public static let bundleID = "com.example.subrecon.tests"
    public static let sharedSecret = "it0shared0secret0it0shared0secret"
    public static let products: [ProductCatalog.Entry] = [
        .init(productID: "premium_monthly", tier: 1, entitlement: "premium"),
        .init(productID: "pro_monthly", tier: 2, entitlement: "pro"),
    ]

    public let db: any WorldDatabase
    public let revenueCat: RevenueCatSimulator
    public let appStore: AppStoreSimulator
    /// Apple's notification history (the App Store feed), signed with the same test PKI.
    public let history: AppleNotificationHistorySimulator
    /// Apple's legacy `verifyReceipt`; in the environment only with `receipts: true`.
    public let receipts: AppleReceiptSimulator
    public let server: SimulatorServer
    public let env: ProcessEnvironment
    public let reportDirectory: URL
    public let logger = Logger(label: "subrecon.world")

    public static func day(_ n: Double) -> Date { asOf.addingTimeInterval(n * 86_400) }

    /// Runs `body` in a world over `db` (which holds `products` already), with the simulators and a report folder;
    /// both are gone when `body` returns.
    ///
    /// - Parameters:
    ///   - revenueCat: false leaves RevenueCat unconfigured (an app without RevenueCat).
    ///   - routes: more simulators served on the same loopback server (Stripe, Google Play); their variables go in
    ///     `extra` (use `{base}` for the server's base URL).
    public static func with(
        _ db: any WorldDatabase, databaseURL: String, apple: Bool = false, receipts useReceipts: Bool = false,
        revenueCat useRevenueCat: Bool = true,
        routes: [any SimulatorRoute] = [], extra: [String: String] = [:], _ body: (JobWorld) async throws -> Void
    ) async throws {
        let apiKey = "sk_test_" + UUID().uuidString
        let appleKey = P256.Signing.PrivateKey()
        let pki = try AppleTestPKI.generate(now: asOf)
        let revenueCat = RevenueCatSimulator(apiKey: apiKey, productEntitlements: ["premium_monthly": "premium", "pro_monthly": "pro"])
        await revenueCat.setClock(asOf)
        let appStore = try AppStoreSimulator(
            pki: pki, apiPublicKey: appleKey.publicKey, issuerID: "issuer-tests", keyID: "KEYTESTS01", bundleID: bundleID,
            signedAt: { asOf })
        let history = try AppleNotificationHistorySimulator(
            pki: pki, apiPublicKey: appleKey.publicKey, issuerID: "issuer-tests", keyID: "KEYTESTS01", bundleID: bundleID)
        let receipts = AppleReceiptSimulator(sharedSecret: sharedSecret, bundleID: bundleID)
        let server = try await SimulatorServer.start(routes: [revenueCat, appStore, history, receipts] + routes)
        let reports = FileManager.default.temporaryDirectory.appendingPathComponent("subrecon-world-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: reports) }
        do {
            let rootFile = reports.appendingPathComponent("root.pem")
            try FileManager.default.createDirectory(at: reports, withIntermediateDirectories: true)
            try Data(try pki.rootPEM().utf8).write(to: rootFile)
            var values = [
                "DATABASE_URL": databaseURL, "SUBRECON_HTTP_TIMEOUT_SECONDS": "2", "SUBRECON_HTTP_MAX_ATTEMPTS": "3",
                "SUBRECON_HTTP_BACKOFF_SECONDS": "0.01",
            ]
            if useRevenueCat {
                values["REVENUECAT_API_KEY"] = apiKey
                values["REVENUECAT_BASE_URL"] = server.baseURL
            }
            if apple {
                values.merge([
                    "APP_STORE_ISSUER_ID": "issuer-tests", "APP_STORE_KEY_ID": "KEYTESTS01",
                    "APP_STORE_PRIVATE_KEY": appleKey.pemRepresentation, "APP_STORE_BUNDLE_ID": bundleID,
                    "APP_STORE_BASE_URL": server.baseURL, "APP_STORE_ROOT_CERTIFICATES": rootFile.path,
                ]) { $1 }
            }
            if useReceipts {
                values["APPLE_SHARED_SECRET"] = sharedSecret
                values["APP_STORE_BUNDLE_ID"] = bundleID
                values["APPLE_VERIFY_RECEIPT_URL"] = server.baseURL + "/verifyReceipt"
            }
            values.merge(extra.mapValues { $0.replacingOccurrences(of: "{base}", with: server.baseURL) }) { $1 }
            try await body(
                JobWorld(
                    db: db, revenueCat: revenueCat, appStore: appStore, history: history, receipts: receipts, server: server,
                    env: ProcessEnvironment(values), reportDirectory: reports))
        } catch {
            await server.shutdown()
            throw error
        }
        await server.shutdown()
    }

    public func options(_ configure: (inout RunOptions) -> Void = { _ in }) -> RunOptions {
        var options = RunOptions(asOf: Self.asOf, reportDirectory: reportDirectory)
        options.concurrency = 4
        options.applyPast = true  // the fixed past instant the tests seed is a deliberate replay (CONTRACT "Exit codes")
        options.sweepDays = 0  // the sweep's own tests turn it on: elsewhere a tier holder is a candidate by rule only
        options.sweepFreeDays = 0  // the free-row sweep's own tests turn it on
        configure(&options)
        return options
    }

    /// `subrecon run` with this world's environment, over its database.
    public func run(_ configure: (inout RunOptions) -> Void = { _ in }) async throws -> RunResult {
        try await db.run(environment: env, options: options(configure), logger: logger)
    }
}
