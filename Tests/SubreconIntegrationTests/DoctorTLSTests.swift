import Foundation
import PostgresNIO
import SubreconJob
import SubreconTestSupport
import Testing

/// `doctor`'s database line says whether the job's own connection is encrypted (docs/CONTRACT.md, "subrecon doctor"):
/// what the client negotiated, never what the server's backend reports, which behind a pooler is the pooler's own
/// link (scripts/pgbouncer-start has PgBouncer reach the server over TLS, its clients in plaintext).
@Suite("doctor's TLS is the job's own connection's", .serialized, .enabled(if: Harness.isEnabled, Harness.skip), .timeLimit(.minutes(5)))
struct DoctorTLSTests {
    static let sessionPooler = ProcessInfo.processInfo.environment["SUBRECON_TEST_PGBOUNCER_SESSION_URL"]
        .flatMap { $0.isEmpty ? nil : $0 }

    @Test(
        "behind PgBouncer with sslmode=disable, its link to the server over TLS: the database line says not encrypted",
        .enabled(
            if: sessionPooler != nil,
            "SUBRECON_TEST_PGBOUNCER_SESSION_URL is not set: scripts/test starts a PgBouncer when pgbouncer is installed"))
    func poolerPlaintext() async throws {
        try await Harness.with { h in
            // The hostile arrangement is real: the pooler's own server connections are encrypted.
            let pooled = try await h.count(
                "select count(*)::int from pg_stat_ssl s join pg_stat_activity a using (pid) where s.ssl and a.client_addr is not null")
            let url = try #require(Self.sessionPooler) + "&search_path=" + OperatorDatabaseTests.schema(of: h)
            let run = try await DoctorTests.doctor(h, ["DATABASE_URL": url])
            let line = DoctorTests.line(run, "database")
            #expect(run.status == 0, "\(run.stdoutText) \(run.operatorLines)")
            #expect(line.contains("not encrypted (sslmode=disable)"), "\(line) (server backends over TLS: \(pooled))")
            #expect(!line.contains("TLS"), "\(line)")
        }
    }

    @Test("directly with sslmode=require: the database line names the TLS version the job's connection negotiated")
    func directTLS() async throws {
        try await Harness.with { h in
            let url = (h.env.values["DATABASE_URL"] ?? "").replacingOccurrences(of: "sslmode=disable", with: "sslmode=require")
            let run = try await DoctorTests.doctor(h, ["DATABASE_URL": url])
            let line = DoctorTests.line(run, "database")
            #expect(run.status == 0, "\(run.stdoutText) \(run.operatorLines) stderr: \(run.stderr.prefix(5000))")
            #expect(line.contains("; TLS") && line.contains("(sslmode=require)"), "\(line)")
        }
    }
}
