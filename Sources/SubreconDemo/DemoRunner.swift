import Crypto
import Foundation
import Logging
import StoreSimulator
import Subrecon
import SubreconCore
import SubreconReports
import SubreconDatabase

/// `subrecon demo`: a throwaway PostgreSQL, the store simulator on loopback, sample users, one real run
/// through `Commands.run` — the production code path, only pointed at local endpoints.
///
/// Reads nothing from the process: the executable passes its `Environment` in (`SUBRECON_PG_BIN` picks the
/// PostgreSQL server binaries); the run itself gets an environment of its own pointing at the local endpoints.
public enum DemoRunner {
    private static func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
    }

    /// One line per seeded user: what the run did and what the user was seeded to show.
    static func story(users: [DemoUser], result: RunResult) throws -> String {
        let data = try Data(contentsOf: result.folder.appendingPathComponent("drift.json"))
        let rows = Dictionary(uniqueKeysWithValues: try JSONDecoder().decode([ReportRow].self, from: data).map { ($0.userID, $0) })
        var lines = ["demo: what each sample user shows (from drift.json):"]
        for user in users.prefix(23) {
            let row = rows[user.row.id]
            let outcome = "\(row?.action ?? "not a candidate") \(row?.drift.joined(separator: ";") ?? "")"
            lines.append("  \(pad(user.row.id, 28)) \(pad(outcome, 58)) \(user.shows)")
        }
        lines.append("  \(pad("demo-24 … demo-33", 28)) \(pad("extend missed_renewal", 58)) ordinary renewals the webhooks missed")
        return lines.joined(separator: "\n")
    }

    /// Starts the throwaway database and the simulator, seeds them, runs the job once and says what each user shows.
    /// - Parameter environment: the process environment, as the executable read it (only `SUBRECON_PG_BIN` is used).
    public static func run(
        environment: Environment, reportDirectory: URL, keep: Bool, logger: Logger,
        progress: (@Sendable (ProgressSnapshot) -> Void)?, say: @Sendable (String) -> Void
    ) async throws -> RunResult {
        let asOf = Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down))
        let postgres = try LocalPostgres.start(environment: environment, logger: logger)
        defer { if !keep { postgres.stop() } }
        say("demo: PostgreSQL started on 127.0.0.1:\(postgres.port) (throwaway cluster in \(postgres.directory.path))")

        // The simulator: RevenueCat and the App Store Server API, signing with a chain generated now.
        let apiKey = "sk_demo_" + String(UInt64.random(in: 0...UInt64.max), radix: 36)
        let appleKey = P256.Signing.PrivateKey()
        let pki = try AppleTestPKI.generate(now: asOf)
        let revenueCat = RevenueCatSimulator(apiKey: apiKey, productEntitlements: DemoScenario.productEntitlements)
        let appStore = try AppStoreSimulator(
            pki: pki, apiPublicKey: appleKey.publicKey, issuerID: "00000000-demo-issuer", keyID: "DEMOKEY001",
            bundleID: DemoScenario.bundleID)
        let receipts = AppleReceiptSimulator(sharedSecret: DemoScenario.sharedSecret, bundleID: DemoScenario.bundleID)
        let server = try await SimulatorServer.start(routes: [revenueCat, appStore, receipts])
        say("demo: store simulator listening on \(server.baseURL) (RevenueCat v1 + App Store Server API + verifyReceipt)")

        let rootFile = postgres.directory.appendingPathComponent("simulator-root.pem")
        try Data(try pki.rootPEM().utf8).write(to: rootFile)
        let runEnvironment = Environment([
            "DATABASE_URL": postgres.url,
            "REVENUECAT_API_KEY": apiKey,
            "REVENUECAT_BASE_URL": server.baseURL,
            "APP_STORE_ISSUER_ID": "00000000-demo-issuer",
            "APP_STORE_KEY_ID": "DEMOKEY001",
            "APP_STORE_PRIVATE_KEY": appleKey.pemRepresentation,
            "APP_STORE_BUNDLE_ID": DemoScenario.bundleID,
            "APP_STORE_BASE_URL": server.baseURL,
            "APP_STORE_ROOT_CERTIFICATES": rootFile.path,
            "APPLE_SHARED_SECRET": DemoScenario.sharedSecret,
            "APPLE_VERIFY_RECEIPT_URL": server.baseURL + "/verifyReceipt",
        ])

        do {
            _ = try await Commands.migrate(environment: runEnvironment, logger: logger)
            let users = DemoScenario.users(asOf: asOf)
            let config = try SubreconConfiguration.load(runEnvironment, requireSource: true)
            try await Commands.withDatabase(config.database, logger: logger) { store in
                try await store.upsertProducts(DemoScenario.products)
                try await store.insertUsers(users.map(\.row))
                for user in users {
                    if let receipt = user.receipt { try await store.saveReceipt(receipt.receiptData, for: user.row.id) }
                }
            }
            for user in users {
                if let subscriber = user.subscriber { await revenueCat.setSubscriber(subscriber, for: user.row.id) }
                if let fault = user.revenueCatFault { await revenueCat.setFault(fault.fault, for: user.row.id, times: fault.times) }
                for scenario in user.apple { await appStore.setScenario(scenario) }
                if let fault = user.appleFault { await appStore.setFault(fault.fault, for: fault.transactionID) }
                if let receipt = user.receipt { await receipts.setScenario(receipt) }
            }
            say("demo: seeded \(users.count) users and \(DemoScenario.products.count) products; running `subrecon run` against them")

            var options = RunOptions(asOf: asOf, reportDirectory: reportDirectory)
            options.concurrency = 8
            let result = try await Commands.run(environment: runEnvironment, options: options, logger: logger, progress: progress)
            await server.shutdown()
            say(try story(users: users, result: result))
            if keep {
                say("demo: database kept running: DATABASE_URL=\(postgres.url)")
            }
            return result
        } catch {
            await server.shutdown()
            throw error
        }
    }
}
