import Foundation
import Logging
import PostgresNIO
import StoreSimulator
import SubreconCore
import SubreconDatabase
import SubreconJob
import SubreconPorts
import SubreconTestSupport
import Testing

/// The TLS parts `scripts/test` starts (`scripts/pg-tls-setup`).
enum TestTLS {
    static let environment = ProcessInfo.processInfo.environment
    /// The CA that signed the test server's certificate (`scripts/pg-tls-setup`).
    static let ca = environment["SUBRECON_TEST_TLS_CA"].flatMap { $0.isEmpty ? nil : $0 }
    /// A CA that signed nothing the servers present.
    static let otherCA = environment["SUBRECON_TEST_TLS_OTHER_CA"].flatMap { $0.isEmpty ? nil : $0 }
    /// The port of a server (the hot standby) presenting an expired certificate for `localhost` signed by `ca`.
    static let expiredPort = environment["SUBRECON_TEST_TLS_EXPIRED_PORT"].flatMap(Int.init)
    /// Without the TLS parts the suite is skipped, saying so; under `SUBRECON_REQUIRE_DATABASE=1` it runs and fails.
    static let isEnabled = ca != nil || TestDatabase.required
    static let skip: Comment =
        "SUBRECON_TEST_TLS_CA is not set: run scripts/test (scripts/pg-tls-setup turns TLS on in its PostgreSQL)"

    struct Missing: Error, CustomStringConvertible {
        var variable: String
        var description: String { "SUBRECON_REQUIRE_DATABASE=1 but \(variable) is not set: scripts/test sets it" }
    }

    static func required<T>(_ value: T?, _ variable: String) throws -> T {
        guard let value else { throw Missing(variable: variable) }
        return value
    }
}

/// The job's connection against a real PostgreSQL serving TLS with a certificate for `localhost` signed by a CA
/// generated when `scripts/test` started (docs/CONTRACT.md, "The session"): `verify-full` with that CA connects and
/// the job works through it; a wrong CA, a host name the certificate does not name and an expired certificate are
/// each exit 69 with one line naming the cause, never a TLS library's error stack or a build path.
@Suite(
    "TLS with a CA generated at test start", .serialized, .enabled(if: TestTLS.isEnabled, TestTLS.skip),
    .timeLimit(.minutes(5)))
struct DatabaseTLSTests {
    /// The test server's URL for `host` and `port` with TLS parameters and the harness's schema.
    static func url(_ h: Harness, host: String, port: Int? = nil, _ tls: String) throws -> String {
        let settings = try TestDatabase.settings()
        return "postgres://postgres@\(host):\(port ?? settings.port)/\(settings.database)?\(tls)&search_path="
            + OperatorDatabaseTests.schema(of: h)
    }

    /// Runs `subrecon ARGUMENTS` with the harness's environment and `DATABASE_URL`.
    static func binary(_ h: Harness, _ arguments: [String], databaseURL: String) async throws -> BinaryRun {
        var env = h.env.values
        env["DATABASE_URL"] = databaseURL
        return try await BinaryRun.run(arguments, environment: env, directory: h.reportDirectory, limit: .seconds(60))
    }

    /// A refused certificate reaches the operator as exit 69 and exactly one line, naming `cause`, with none of the
    /// TLS library's text (its error stack names the paths it was built from).
    static func expectRefused(_ run: BinaryRun, cause: String, naming: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(run.status == 69, "\(run.operatorLines)", sourceLocation: sourceLocation)
        #expect(run.operatorLines.count == 1, "\(run.operatorLines)", sourceLocation: sourceLocation)
        let line = run.operatorLines.first ?? ""
        #expect(line.contains(cause) && line.contains(naming), "\(line)", sourceLocation: sourceLocation)
        for library in ["NIOSSL", "BoringSSL", "OPENSSL_internal", "handshakeFailed", "sslError", ".cc:", ".swift", "Error: "] {
            #expect(!line.contains(library), "the line shows the TLS library's text (\(library)): \(line)", sourceLocation: sourceLocation)
        }
    }

    @Test("verify-full with the generated CA connects over TLS; migrate and a dry run work through it; verify-ca skips the host name")
    func rightCA() async throws {
        let ca = try TestTLS.required(TestTLS.ca, "SUBRECON_TEST_TLS_CA")
        try await Harness.with { h in
            _ = try await h.seedChanging(prefix: "tls", count: 2)
            let url = try Self.url(h, host: "localhost", "sslmode=verify-full&sslrootcert=\(ca)")
            let settings = try DatabaseSettings(environment: ["DATABASE_URL": url])
            try await SubscriptionDatabase.checkReachable(settings, logger: h.logger)
            // The session really is encrypted: the server says so for its own backend.
            let connection = try await PostgresConnection.connect(
                configuration: try settings.connectionConfiguration(), id: 1, logger: h.logger)
            var encrypted: Bool?
            for try await ssl in try await connection.query("select ssl from pg_stat_ssl where pid = pg_backend_pid()", logger: h.logger)
                .decode(Bool.self)
            {
                encrypted = ssl
            }
            try await connection.close()
            #expect(encrypted == true)

            let migrate = try await Self.binary(h, ["migrate"], databaseURL: url)
            #expect(migrate.status == 0, "\(migrate.operatorLines)")
            let dry = try await Self.binary(
                h, ["run", "--dry-run", "--as-of", ISO8601.string(Harness.asOf), "--report-dir", h.reportDirectory.path], databaseURL: url)
            #expect(dry.status == 0, "\(dry.operatorLines)")
            #expect(await h.revenueCat.counters().totalRequests >= 2, "both users were asked, read through the TLS session")

            // verify-ca checks the chain only: the address the certificate does not name is accepted.
            let byAddress = try Self.url(h, host: "127.0.0.1", "sslmode=verify-ca&sslrootcert=\(ca)")
            try await SubscriptionDatabase.checkReachable(try DatabaseSettings(environment: ["DATABASE_URL": byAddress]), logger: h.logger)
        }
    }

    @Test("a CA that did not sign the server's certificate: exit 69, one line saying unknown CA and naming sslrootcert")
    func wrongCA() async throws {
        let other = try TestTLS.required(TestTLS.otherCA, "SUBRECON_TEST_TLS_OTHER_CA")
        try await Harness.with { h in
            let url = try Self.url(h, host: "localhost", "sslmode=verify-full&sslrootcert=\(other)")
            let run = try await Self.binary(
                h, ["run", "--as-of", ISO8601.string(Harness.asOf), "--apply-past", "--report-dir", h.reportDirectory.path],
                databaseURL: url)
            Self.expectRefused(run, cause: "unknown CA", naming: other)
            #expect(await h.revenueCat.counters().totalRequests == 0)
            #expect(try await h.count("select count(*)::int from reconcile_runs") == 0)
            // verify-ca refuses it too: the chain is what is wrong.
            let chainOnly = try await Self.binary(
                h, ["migrate"], databaseURL: try Self.url(h, host: "localhost", "sslmode=verify-ca&sslrootcert=\(other)"))
            Self.expectRefused(chainOnly, cause: "unknown CA", naming: other)
        }
    }

    @Test("an sslrootcert that is missing, or holds no certificate: exit 78 at start naming the setting, before any connection or store")
    func unusableRootCertificate() async throws {
        try await Harness.with { h in
            let empty = h.reportDirectory.appendingPathComponent("empty.pem")
            try Data("not a certificate\n".utf8).write(to: empty)
            for path in ["/nonexistent/subrecon-ca.pem", empty.path] {
                let url = try Self.url(h, host: "localhost", "sslmode=verify-full&sslrootcert=\(path)")
                let run = try await Self.binary(
                    h, ["run", "--as-of", ISO8601.string(Harness.asOf), "--apply-past", "--report-dir", h.reportDirectory.path],
                    databaseURL: url)
                #expect(run.status == 78, "\(path): \(run.operatorLines)")
                #expect(run.operatorLines.count == 1, "\(path): \(run.operatorLines)")
                let line = run.operatorLines.first ?? ""
                #expect(line.contains("sslrootcert") && line.contains(path), "\(line)")
                let migrate = try await Self.binary(h, ["migrate"], databaseURL: url)
                #expect(migrate.status == 78, "migrate, \(path): \(migrate.operatorLines)")
            }
            #expect(await h.revenueCat.counters().totalRequests == 0, "no store was asked")
            #expect(try await h.count("select count(*)::int from reconcile_runs") == 0, "no run recorded")
        }
    }

    @Test("a certificate for localhost reached as 127.0.0.1 under verify-full: exit 69, one line saying host name mismatch")
    func hostNameMismatch() async throws {
        let ca = try TestTLS.required(TestTLS.ca, "SUBRECON_TEST_TLS_CA")
        try await Harness.with { h in
            let run = try await Self.binary(
                h, ["migrate"], databaseURL: try Self.url(h, host: "127.0.0.1", "sslmode=verify-full&sslrootcert=\(ca)"))
            Self.expectRefused(run, cause: "host name mismatch", naming: "127.0.0.1")
        }
    }

    @Test("an expired certificate signed by the right CA: exit 69, one line saying expired")
    func expired() async throws {
        let ca = try TestTLS.required(TestTLS.ca, "SUBRECON_TEST_TLS_CA")
        let port = try TestTLS.required(TestTLS.expiredPort, "SUBRECON_TEST_TLS_EXPIRED_PORT")
        try await Harness.with { h in
            let run = try await Self.binary(
                h, ["migrate"], databaseURL: try Self.url(h, host: "localhost", port: port, "sslmode=verify-full&sslrootcert=\(ca)"))
            Self.expectRefused(run, cause: "expired", naming: "2020-01-02")
        }
    }
}
