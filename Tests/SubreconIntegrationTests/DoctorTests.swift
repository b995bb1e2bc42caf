import AppStore
import Foundation
import PostgresNIO
import StoreSimulator
import SubreconJob
import SubreconPorts
import Testing

/// `subrecon doctor` as an operator runs it (docs/CONTRACT.md, "subrecon doctor"): the real binary against a real
/// schema and the loopback simulators, each answering a failure as the store does.
@Suite("subrecon doctor", .serialized, .enabled(if: Harness.isEnabled, Harness.skip), .timeLimit(.minutes(5)))
struct DoctorTests {
    static let package = "com.example.doctor"
    static let stripeKey = "rk_test_DoctorRestrictedKey9Z"
    static let everyLine = ["configuration", "database", "schema", "users", "role", "revenuecat", "app_store", "google_play", "stripe"]

    /// RevenueCat, the App Store, Google Play and Stripe configured against the loopback simulators.
    static func withEverySource(_ body: (Harness, StripeSimulator, GooglePlaySimulator) async throws -> Void) async throws {
        let account = try GoogleTestServiceAccount.generate(tokenURI: "{base}/token")
        let google = GooglePlaySimulator(account: account, packageName: package)
        let stripe = StripeSimulator(apiKey: stripeKey)
        let extra = [
            "STRIPE_API_KEY": stripeKey, "STRIPE_BASE_URL": "{base}", "GOOGLE_PLAY_SERVICE_ACCOUNT": account.json,
            "GOOGLE_PLAY_PACKAGE_NAME": package, "GOOGLE_PLAY_BASE_URL": "{base}",
        ]
        try await Harness.with(apple: true, routes: [stripe, google], extra: extra) { h in try await body(h, stripe, google) }
    }

    /// `subrecon doctor` with `env` (the harness's, changed by `changes`: nil removes a variable).
    static func doctor(
        _ h: Harness, env: [String: String]? = nil, arguments: [String] = [], _ changes: [String: String?] = [:]
    ) async throws -> BinaryRun {
        var values = env ?? h.env.values
        for (name, value) in changes { values[name] = value }
        return try await BinaryRun.run(["doctor"] + arguments, environment: values, directory: h.reportDirectory, limit: .seconds(120))
    }

    /// The lines on stdout, and the subject of each (`✓ subject: …`).
    static func lines(_ run: BinaryRun) -> [String] { run.stdoutText.split(separator: "\n").map(String.init) }
    static func subjects(_ run: BinaryRun) -> [String] {
        lines(run).map { line in String(line.dropFirst(2).prefix { $0 != ":" }) }
    }
    static func line(_ run: BinaryRun, _ subject: String) -> String {
        lines(run).first { $0.dropFirst(2).hasPrefix(subject + ":") } ?? ""
    }

    @Test("everything in order: exit 0, a ✓ line per check in order, each store asked once harmlessly, RevenueCat never")
    func everythingHolds() async throws {
        try await Self.withEverySource { h, stripe, google in
            let run = try await Self.doctor(h)
            #expect(run.status == 0, "\(run.stdoutText) \(run.operatorLines)")
            #expect(Self.subjects(run) == Self.everyLine)
            #expect(Self.lines(run).allSatisfy { $0.hasPrefix("✓ ") }, "\(run.stdoutText)")
            #expect(run.operatorLines.isEmpty)
            #expect(Self.line(run, "database").contains("as role postgres; not encrypted (sslmode=disable)"))
            #expect(Self.line(run, "revenuecat").contains("not sent"))
            #expect(await h.revenueCat.counters().totalRequests == 0, "RevenueCat is never asked")
            #expect(await h.appStore.historyRequests(for: AppStoreClient.probeTransactionID) == 1)
            #expect(await google.voidedRequestQueries() == [["type": "1", "maxResults": "1"]])
            #expect(await stripe.recordedRequests().count == 6)
            #expect(try await h.count("select count(*)::int from reconcile_runs") == 0, "nothing recorded")
            // No secret reaches the output: the keys, the private keys' bodies.
            let output = run.stdoutText + run.stderr
            var secrets = [Self.stripeKey, h.env.values["REVENUECAT_API_KEY"] ?? "-"]
            for pem in [h.env.values["APP_STORE_PRIVATE_KEY"] ?? "", h.env.values["GOOGLE_PLAY_SERVICE_ACCOUNT"] ?? ""] {
                // The private keys' base64 lines (the service account's JSON writes its newlines as `\n`).
                let base64 = CharacterSet.alphanumerics.union(CharacterSet(charactersIn: "+/="))
                secrets += pem.replacingOccurrences(of: "\\n", with: "\n").components(separatedBy: CharacterSet(charactersIn: "\n\""))
                    .filter {
                        $0.count >= 40 && $0.unicodeScalars.allSatisfy { base64.contains($0) }
                    }
            }
            #expect(secrets.count >= 4)
            for secret in secrets { #expect(!output.contains(secret), "a secret in the output") }
        }
    }

    @Test("a Google account without the app's grant and a restricted Stripe key without checkout sessions: 78, both named")
    func storePermissions() async throws {
        try await Self.withEverySource { h, stripe, google in
            await google.setAccessDenied(.permissionDenied)
            await stripe.restrictKey(denying: [.checkoutSessions])
            let run = try await Self.doctor(h)
            #expect(run.status == 78, "\(run.stdoutText)")
            #expect(Self.subjects(run) == Self.everyLine, "every check still runs")
            let play = Self.line(run, "google_play")
            #expect(play.hasPrefix("✗ ") && play.contains("HTTP 401 (permissionDenied)") && play.contains("Play Console"))
            let stripeLine = Self.line(run, "stripe")
            #expect(stripeLine.hasPrefix("✗ ") && stripeLine.contains("checkout sessions ('rak_checkout_session_read')"))
            #expect(!stripeLine.contains("9Z"), "Stripe's message repeats the key's end; not the line")
            #expect(run.operatorLines == ["subrecon: doctor: 2 problems; the first configuration problem: " + play.dropFirst(2)])
        }
    }

    @Test("a public RevenueCat key and an App Store key of another id: 78; RevenueCat is not asked, Apple refuses the token")
    func wrongKeys() async throws {
        try await Self.withEverySource { h, _, _ in
            let run = try await Self.doctor(h, ["REVENUECAT_API_KEY": "appl_PublicSdkKey0123", "APP_STORE_KEY_ID": "NOTOURKEY1"])
            #expect(run.status == 78, "\(run.stdoutText)")
            #expect(Self.line(run, "revenuecat").hasPrefix("✗ revenuecat: REVENUECAT_API_KEY is a public SDK key (appl_…)"))
            #expect(Self.line(run, "app_store").contains("answered 401: Apple refused the API token"))
            #expect(!run.stdoutText.contains("PublicSdkKey0123"))
            #expect(await h.revenueCat.counters().totalRequests == 0)
            #expect(run.operatorLines.first?.contains("the first configuration problem: revenuecat:") == true)
        }
    }

    @Test("a store that cannot be reached: 69 naming it, the rest still checked and holding")
    func storeUnreachable() async throws {
        try await Self.withEverySource { h, _, _ in
            let run = try await Self.doctor(h, ["STRIPE_BASE_URL": "http://127.0.0.1:9"])
            #expect(run.status == 69, "\(run.stdoutText)")
            #expect(Self.line(run, "stripe").hasPrefix("✗ stripe: GET /v1/subscriptions?limit=1&status=all: no answer about the key"))
            #expect(Self.lines(run).filter { $0.hasPrefix("✓ ") }.count == Self.everyLine.count - 1)
            #expect(run.operatorLines.first?.hasPrefix("subrecon: doctor: 1 problem; unreachable: stripe:") == true)
        }
    }

    @Test("a store slower than --timeout: 69, its line says so; the other stores are still checked")
    func storeTimeout() async throws {
        try await Self.withEverySource { h, stripe, _ in
            // Stripe answers its first list a byte every half second: far longer than the 1 s doctor gives a store.
            await stripe.setFault(.trickle(pause: .milliseconds(500)), for: StripeSimulator.inventoryKey)
            let started = ContinuousClock.now
            let run = try await Self.doctor(h, arguments: ["--timeout", "1"])
            #expect(ContinuousClock.now - started < .seconds(30), "the store's check ends at its deadline")
            #expect(run.status == 69, "\(run.stdoutText)")
            #expect(Self.line(run, "stripe") == "✗ stripe: no answer within 1.0 s (--timeout)")
            #expect(Self.line(run, "app_store").hasPrefix("✓ ") && Self.line(run, "google_play").hasPrefix("✓ "))
        }
    }

    @Test("a database that cannot be reached: 69 on its line; the stores are still checked")
    func databaseUnreachable() async throws {
        try await Harness.with { h in
            let run = try await Self.doctor(h, ["DATABASE_URL": "postgres://postgres@127.0.0.1:1/nowhere?sslmode=disable"])
            #expect(run.status == 69, "\(run.stdoutText)")
            #expect(Self.subjects(run) == ["configuration", "database", "revenuecat"])
            #expect(Self.line(run, "database").hasPrefix("✗ database: database at 127.0.0.1:1 is unreachable"))
            #expect(Self.line(run, "revenuecat").hasPrefix("✓ "))
        }
    }

    @Test("a schema not migrated: 78 asking for migrate, as run says it")
    func schemaMissing() async throws {
        try await Harness.with { h in
            let empty = "doctor_empty_" + UUID().uuidString.prefix(8).lowercased()
            try await h.client.query(PostgresQuery(unsafeSQL: "create schema \(empty)"))
            let url = try OperatorDatabaseTests.baseURL() + "&search_path=\(empty)"
            let run = try await Self.doctor(h, ["DATABASE_URL": url])
            _ = try? await h.client.query(PostgresQuery(unsafeSQL: "drop schema \(empty) cascade"))
            #expect(run.status == 78, "\(run.stdoutText)")
            #expect(Self.line(run, "database").hasPrefix("✓ "))
            #expect(Self.line(run, "schema").hasPrefix("✗ schema: ") && Self.line(run, "schema").contains("subrecon migrate"))
        }
    }

    @Test("the job's role without UPDATE on users, and with row-level security but no policy: 78 naming them, as run checks")
    func databaseRole() async throws {
        try await Harness.with { h in
            try await OperatorDatabaseTests.withRole(
                h, grants: OperatorDatabaseTests.jobGrants + ["revoke update on {schema}.users from {role}"]
            ) { env in
                let run = try await Self.doctor(h, env: env.values)
                #expect(run.status == 78, "\(run.stdoutText)")
                let role = Self.line(run, "role")
                #expect(role.hasPrefix("✗ role: ") && role.contains("lacks UPDATE on") && role.contains("users"))
                #expect(Self.line(run, "revenuecat").hasPrefix("✓ "), "the stores are still checked")
            }
            try await OperatorDatabaseTests.withRole(
                h, grants: OperatorDatabaseTests.jobGrants + ["alter table {schema}.users enable row level security"]
            ) { env in
                let run = try await Self.doctor(h, env: env.values)
                #expect(run.status == 78, "\(run.stdoutText)")
                let role = Self.line(run, "role")
                #expect(role.contains("row-level security on") && role.contains("no policy lets it"))
            }
        }
    }

    @Test("a variable that cannot be used: 78 on the configuration line, nothing else asked")
    func configurationError() async throws {
        try await Harness.with { h in
            let run = try await Self.doctor(h, ["APP_STORE_ENVIRONMENT": "staging"])
            #expect(run.status == 78)
            #expect(Self.lines(run) == ["✗ configuration: APP_STORE_ENVIRONMENT must be production or sandbox"])
            #expect(run.operatorLines.count == 1)
        }
    }
}
