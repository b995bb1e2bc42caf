import Crypto
import Foundation
import Logging
import StoreSimulator
import SubreconApp
import SubreconCore
import SubreconDatabase
import SubreconJob
import SubreconReports

/// What `subrecon demo` ran: one night with every source, one without RevenueCat.
public struct DemoResult: Sendable {
    /// Run 1: RevenueCat, the App Store (Server API, notification history, receipts), Stripe and Google Play.
    public var allSources: RunResult
    /// Run 2, in a second database of the same cluster: the App Store, Stripe and Google Play, no RevenueCat.
    public var withoutRevenueCat: RunResult

    /// The demo's exit status: 0 when both runs completed (they seed errors and a forged signature on purpose, so
    /// "some users errored" is expected), else the first run's safety-valve or shard-lock status.
    public var exitStatus: ExitStatus {
        for result in [allSources, withoutRevenueCat] where result.exitStatus == .valveTripped || result.exitStatus == .shardLocked {
            return result.exitStatus
        }
        return .ok
    }
}

/// `subrecon demo`: a throwaway PostgreSQL, the store simulators on loopback, sample users, two real runs
/// through `Commands.run` — the production code path, only pointed at local endpoints.
///
/// Reads nothing from the process: the executable passes its `ProcessEnvironment` in (`SUBRECON_PG_BIN` picks the
/// PostgreSQL server binaries); each run gets an environment of its own pointing at the local endpoints.
public enum DemoRunner {
    /// The second run's database, beside `postgres` in the same throwaway cluster.
    static let secondDatabase = "subrecon_demo_no_revenuecat"

    /// The user the rolling sweep catches on the night of `asOf` (its id depends on the night, CONTRACT "Which users a run asks about").
    public static func sweptUserID(asOf: Date) -> String { DemoScenario.sweptUserID(asOf: asOf) }

    /// The simulators of both runs, on one loopback server.
    struct Simulators {
        let revenueCat: RevenueCatSimulator
        let appStore: AppStoreSimulator
        let history: AppleNotificationHistorySimulator
        let receipts: AppleReceiptSimulator
        let stripe: StripeSimulator
        let google: GooglePlaySimulator

        /// Tells each simulator what it says about `users`.
        func seed(_ users: [DemoUser]) async {
            for user in users {
                if let subscriber = user.subscriber { await revenueCat.setSubscriber(subscriber, for: user.row.id) }
                if let fault = user.revenueCatFault { await revenueCat.setFault(fault.fault, for: user.row.id, times: fault.times) }
                for scenario in user.apple { await appStore.setScenario(scenario) }
                if let fault = user.appleFault { await appStore.setFault(fault.fault, for: fault.transactionID) }
                if let receipt = user.receipt { await receipts.setScenario(receipt) }
                for notification in user.notifications { await history.add(notification) }
                if let customer = user.row.identifiers[.stripe] ?? user.stripeCustomer {
                    await stripe.setSubscriptions(user.stripe, forCustomer: customer)
                }
                if let token = user.row.identifiers[.googlePlay], let purchase = user.google {
                    await google.setPurchase(purchase, token: token)
                }
                for (token, purchase) in user.googleTokens { await google.setPurchase(purchase, token: token) }
                for purchase in user.voided { await google.addVoided(purchase) }
                if !user.stripeEvents.isEmpty { await stripe.addEvents(user.stripeEvents) }
                if !user.stripeCharges.isEmpty { await stripe.addCharges(user.stripeCharges) }
            }
        }
    }

    /// Migrates the database `environment` names and stores the products, the users' rows and their receipts.
    static func seedDatabase(_ users: [DemoUser], environment: ProcessEnvironment, logger: Logger) async throws {
        _ = try await Commands.migrate(environment: environment, logger: logger)
        let config = try SubreconConfiguration.load(environment, requireSource: true)
        try await Commands.withDatabase(config.database, logger: logger) { unchecked in
            // Checked as `run` checks it, so the rows' optional `account_token` is written too.
            let database = unchecked.with(users: try await unchecked.checkUsers(requiring: [], writable: true))
            try await database.catalog.upsertProducts(DemoScenario.products)
            try await database.insertUsers(users.map(\.row))
            for user in users {
                if let receipt = user.receipt { try await database.receipts.saveReceipt(receipt.receiptData, for: user.row.id) }
            }
        }
    }

    /// Starts the throwaway database and the simulators, runs the job with every source, then again without
    /// RevenueCat in a second database, and says what each user shows after each run.
    /// - Parameter environment: the process environment, as the executable read it (only `SUBRECON_PG_BIN` is used).
    /// - Parameter explain: a sample user to explain (`subrecon explain`, CONTRACT "Commands") after seeding, before the run that
    ///   holds it; nil explains nobody. An id no run holds fails the demo with exit 66, before any run.
    /// - Parameter say: receives the demo's lines: start-up, each run's story and terminal summary.
    public static func run(
        environment: ProcessEnvironment, reportDirectory: URL, keep: Bool, explain: String? = nil, logger: Logger,
        progress: (@Sendable (ProgressSnapshot) -> Void)?, say: @escaping @Sendable (String) -> Void
    ) async throws -> DemoResult {
        let asOf = Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down))
        let postgres = try LocalPostgres.start(environment: environment, logger: logger)
        defer { if !keep { postgres.stop() } }
        say("demo: PostgreSQL started on 127.0.0.1:\(postgres.port) (throwaway cluster in \(postgres.directory.path))")
        let setup = try await startSimulators(asOf: asOf, directory: postgres.directory)
        say(
            "demo: store simulator listening on \(setup.server.baseURL) "
                + "(RevenueCat v1 and v2, App Store Server API + notification history, verifyReceipt, Stripe, Google Play)")
        do {
            var options = RunOptions(asOf: asOf, reportDirectory: reportDirectory)
            options.concurrency = 8
            options.sweepDays = DemoScenario.sweepDays
            options.sweepFreeDays = 0  // the sample rows without a tier are candidates by their own rules only
            let night = Night(simulators: setup.simulators, options: options, logger: logger, progress: progress, say: say)

            // Run 1: every source. The user to explain is explained before the run that holds it; an id no run holds
            // is explained against run 1's database (exit 66, before any run).
            let users = DemoScenario.users(asOf: asOf)
            let soloUsers = DemoScenario.withoutRevenueCat(asOf: asOf)
            let explainInSecond = explain.map { id in soloUsers.contains { $0.row.id == id } } ?? false
            let allSources = try await night.run(
                users, explaining: explainInSecond ? nil : explain, doctor: true,
                environment: ProcessEnvironment(
                    setup.stores.merging(setup.revenueCat) { $1 }.merging(["DATABASE_URL": postgres.url]) { $1 }),
                before: "run 1",
                announce: "demo: run 1 of 2, every source (RevenueCat v1 with API v2 first, App Store + receipts + notification "
                    + "history, Stripe, Google Play): seeded \(users.count) users and \(DemoScenario.products.count) products; running `subrecon run` against them",
                title: "demo: run 1, every source: what each sample user shows (from drift.json)")

            // Run 2: the same stores without RevenueCat, in a database of its own (fresh users, a first night).
            try postgres.createDatabase(secondDatabase)
            let withoutRevenueCat = try await night.run(
                soloUsers, explaining: explainInSecond ? explain : nil, doctor: false,
                environment: ProcessEnvironment(setup.stores.merging(["DATABASE_URL": postgres.url(database: secondDatabase)]) { $1 }),
                before: "run 2",
                announce: "demo: run 2 of 2, no RevenueCat (App Store, Stripe, Google Play asked directly) in database \(secondDatabase): "
                    + "seeded \(soloUsers.count) users; running `subrecon run` against them",
                title: "demo: run 2, no RevenueCat: what each sample user shows (from drift.json)")
            await setup.server.shutdown()
            try await closeNights(
                asOf: asOf,
                databases: [
                    ("run 1, every source", postgres.url, "finance"),
                    ("run 2, no RevenueCat", postgres.url(database: secondDatabase), "finance/without-revenuecat"),
                ], reportDirectory: reportDirectory, logger: logger, say: say)
            if keep {
                say("demo: database kept running: DATABASE_URL=\(postgres.url) (run 2: \(postgres.url(database: secondDatabase)))")
            }
            return DemoResult(allSources: allSources, withoutRevenueCat: withoutRevenueCat)
        } catch {
            await setup.server.shutdown()
            throw error
        }
    }

    /// The simulators on one loopback server and the stores' variables pointing at them (RevenueCat's apart).
    struct Setup {
        let simulators: Simulators
        let server: SimulatorServer
        let stores: [String: String]
        let revenueCat: [String: String]
    }

    /// Every store's simulator, signing with a chain generated now; keys made up for this demo.
    static func startSimulators(asOf: Date, directory: URL) async throws -> Setup {
        let apiKey = "sk_demo_" + String(UInt64.random(in: 0...UInt64.max), radix: 36)
        let stripeKey = "sk_test_demo_" + String(UInt64.random(in: 0...UInt64.max), radix: 36)
        let appleKey = P256.Signing.PrivateKey()
        let pki = try AppleTestPKI.generate(now: asOf)
        // The service account's token_uri names the simulator, whose port is known once it listens.
        let googleAccount = try GoogleTestServiceAccount.generate(
            clientEmail: "subrecon-demo@subrecon-demo.iam.gserviceaccount.com", tokenURI: "{base}/token")
        let simulators = Simulators(
            revenueCat: RevenueCatSimulator(apiKey: apiKey, productEntitlements: DemoScenario.productEntitlements),
            appStore: try AppStoreSimulator(
                pki: pki, apiPublicKey: appleKey.publicKey, issuerID: "00000000-demo-issuer", keyID: "DEMOKEY001",
                bundleID: DemoScenario.bundleID),
            history: try AppleNotificationHistorySimulator(
                pki: pki, apiPublicKey: appleKey.publicKey, issuerID: "00000000-demo-issuer", keyID: "DEMOKEY001",
                bundleID: DemoScenario.bundleID),
            receipts: AppleReceiptSimulator(sharedSecret: DemoScenario.sharedSecret, bundleID: DemoScenario.bundleID),
            stripe: StripeSimulator(apiKey: stripeKey),
            google: GooglePlaySimulator(account: googleAccount, packageName: DemoScenario.packageName))
        let server = try await SimulatorServer.start(routes: [
            simulators.revenueCat, simulators.appStore, simulators.history, simulators.receipts, simulators.stripe, simulators.google,
        ])
        // Run 1 asks RevenueCat API v2 first, as RevenueCat recommends today: it creates no customer.
        let v2Key = "sk_demo_v2_" + String(UInt64.random(in: 0...UInt64.max), radix: 36)
        await simulators.revenueCat.setV2(apiKey: v2Key, projectID: "projdemo01")
        let rootFile = directory.appendingPathComponent("simulator-root.pem")
        do {
            try Data(try pki.rootPEM().utf8).write(to: rootFile)
        } catch {
            await server.shutdown()
            throw error
        }
        let stores = [
            "APP_STORE_ISSUER_ID": "00000000-demo-issuer",
            "APP_STORE_KEY_ID": "DEMOKEY001",
            "APP_STORE_PRIVATE_KEY": appleKey.pemRepresentation,
            "APP_STORE_BUNDLE_ID": DemoScenario.bundleID,
            "APP_STORE_BASE_URL": server.baseURL,
            "APP_STORE_ROOT_CERTIFICATES": rootFile.path,
            "APPLE_SHARED_SECRET": DemoScenario.sharedSecret,
            "APPLE_VERIFY_RECEIPT_URL": server.baseURL + "/verifyReceipt",
            "STRIPE_API_KEY": stripeKey,
            "STRIPE_BASE_URL": server.baseURL,
            "GOOGLE_PLAY_SERVICE_ACCOUNT": googleAccount.json.replacingOccurrences(of: "{base}", with: server.baseURL),
            "GOOGLE_PLAY_PACKAGE_NAME": DemoScenario.packageName,
            "GOOGLE_PLAY_BASE_URL": server.baseURL,
        ]
        return Setup(
            simulators: simulators, server: server, stores: stores,
            revenueCat: [
                "REVENUECAT_API_KEY": apiKey, "REVENUECAT_BASE_URL": server.baseURL, "REVENUECAT_V2_API_KEY": v2Key,
                "REVENUECAT_PROJECT_ID": "projdemo01",
            ])
    }

    /// One demo night: seed the database and the simulators, explain the chosen user if it is one of these, check
    /// everything the night needs with `subrecon doctor` (`doctor`), run the job, and say its story and summary.
    struct Night {
        let simulators: Simulators
        let options: RunOptions
        let logger: Logger
        let progress: (@Sendable (ProgressSnapshot) -> Void)?
        let say: @Sendable (String) -> Void

        func run(
            _ users: [DemoUser], explaining: String?, doctor: Bool, environment: ProcessEnvironment, before: String, announce: String,
            title: String
        ) async throws -> RunResult {
            try await seedDatabase(users, environment: environment, logger: logger)
            await simulators.seed(users)
            if let explaining {
                say(try await explanation(of: explaining, environment: environment, asOf: options.asOf, before: before, logger: logger))
            }
            if doctor {
                let report = await Commands.doctor(environment: environment, logger: logger)
                say(
                    ([
                        "demo: subrecon doctor, before \(before) (the database as `run` checks it, each store's key with one harmless read; "
                            + "exit \(report.exitStatus.rawValue)):"
                    ] + report.lines.map { "  " + $0 }).joined(separator: "\n"))
            }
            say(announce)
            let result = try await Commands.run(environment: environment, options: options, logger: logger, progress: progress)
            say(try story(title: title, users: users, result: result))
            say(TerminalSummary.text(result.summary, folder: result.folder))
            return result
        }
    }

    /// `subrecon explain USER_ID --as-of AS_OF` against the demo's database and simulators, as text.
    static func explanation(of userID: String, environment: ProcessEnvironment, asOf: Date, before run: String, logger: Logger) async throws
        -> String
    {
        let explanation = try await Commands.explain(environment: environment, userID: userID, asOf: asOf, logger: logger)
        return
            (["demo: subrecon explain \(userID) --as-of \(ISO8601.string(asOf)), before \(run) (asks every source, changes nothing):"]
            + explanation.text).joined(separator: "\n")
    }
}
