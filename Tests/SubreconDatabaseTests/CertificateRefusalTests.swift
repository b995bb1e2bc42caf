import Foundation
import PostgresNIO
import SubreconPorts
import Testing

@testable import SubreconDatabase

/// How a refused TLS certificate reaches the operator (docs/CONTRACT.md, "The session"): one short cause, exit 69,
/// never the TLS library's error stack, whose entries end in the path of the file it was built from.
@Suite("A refused certificate is one line naming the cause")
struct CertificateRefusalTests {
    /// What a BoringSSL error entry of a refused chain reads like (its code, its reason, the build path and line).
    static let verifyFailedEntry =
        "Error: 268435581 error:1000007d:SSL routines:OPENSSL_internal:CERTIFICATE_VERIFY_FAILED at "
        + "/work/x/.build/checkouts/swift-nio-ssl/Sources/CNIOBoringSSL/ssl/handshake.cc:393"

    @Test("the reason code of a BoringSSL entry, without its build path")
    func reasonCode() {
        #expect(CertificateRefusal.reasonCode(Self.verifyFailedEntry) == "CERTIFICATE_VERIFY_FAILED")
        #expect(
            CertificateRefusal.reasonCode("Error: 1 error:100000f7:SSL routines:OPENSSL_internal:WRONG_VERSION_NUMBER at /b/s3_pkt.cc:1")
                == "WRONG_VERSION_NUMBER")
        #expect(CertificateRefusal.reasonCode("Error:  EOF during handshake") == "EOF during handshake")
        #expect(CertificateRefusal.reasonCode("at /only/a/path.cc:3") == "unknown")
    }

    @Test("a host name NIOSSL could not find in the certificate is a host name mismatch naming the host; exit 69")
    func hostName() {
        let refusal = CertificateRefusal.refusal(in: NIOSSLExtraError.failedToValidateHostname, host: "127.0.0.1", trusted: "/etc/ca.pem")
        #expect(refusal == .hostNameMismatch(host: "127.0.0.1"))
        let settings = DatabaseSettings(host: "127.0.0.1", port: 5433, username: "job", database: "app", sslMode: .verifyFull)
        let error = DatabaseError.wrap(NIOSSLExtraError.failedToValidateHostname, operation: "connect", settings: settings)
        #expect(error.isUnavailable)
        #expect(
            error.description
                == "the TLS certificate of the database at 127.0.0.1:5433 is refused: host name mismatch: the server's certificate "
                + "does not name '127.0.0.1' (sslmode=verify-full; connect by a name it lists, or use verify-ca)")
    }

    @Test("a refused chain is judged by the certificate's dates: expired, not yet valid, else an unknown CA")
    func judged() {
        let notBefore = Date(timeIntervalSince1970: 1_577_836_800)  // 2020-01-01
        let notAfter = Date(timeIntervalSince1970: 1_577_923_200)  // 2020-01-02
        #expect(
            CertificateRefusal.judge(notBefore: notBefore, notAfter: notAfter, now: notAfter.addingTimeInterval(1), trusted: "/ca.pem")
                == .expired(notAfter: notAfter))
        #expect(
            CertificateRefusal.judge(notBefore: notBefore, notAfter: notAfter, now: notBefore.addingTimeInterval(-1), trusted: nil)
                == .notYetValid(notBefore: notBefore))
        #expect(
            CertificateRefusal.judge(notBefore: notBefore, notAfter: notAfter, now: notBefore.addingTimeInterval(60), trusted: "/ca.pem")
                == .unknownAuthority(trusted: "/ca.pem"))
        #expect(
            CertificateRefusal.expired(notAfter: notAfter).cause == "expired: the server's certificate was valid until 2020-01-02T00:00:00Z"
        )
        #expect(CertificateRefusal.unknownAuthority(trusted: "/ca.pem").cause.hasPrefix("unknown CA: "))
        #expect(CertificateRefusal.unknownAuthority(trusted: "/ca.pem").cause.contains("sslrootcert '/ca.pem'"))
        #expect(CertificateRefusal.unknownAuthority(trusted: nil).cause.contains("system trust store"))
    }

    @Test("a TLS failure that is not a refused certificate: unreachable with the reason code only; other errors unchanged")
    func otherFailures() {
        let plain = DatabaseError.wrap(NIOSSLError.handshakeFailed(.sslError([])), operation: "connect", endpoint: "db:5432")
        #expect(plain == .unreachable(endpoint: "db:5432", reason: "TLS handshake failed"))
        #expect(CertificateRefusal.refusal(in: NIOSSLError.handshakeFailed(.sslError([])), host: "db", trusted: nil) == nil)
        #expect(CertificateRefusal.refusal(in: NIOSSLError.uncleanShutdown, host: "db", trusted: nil) == nil)
        let unclean = DatabaseError.wrap(NIOSSLError.uncleanShutdown, operation: "connect", endpoint: "db:5432")
        #expect(unclean == .unreachable(endpoint: "db:5432", reason: "the server closed the TLS session uncleanly"))
        struct Other: Error {}
        #expect(DatabaseError.wrap(Other(), operation: "x") == .database(operation: "x", reason: "Other"))
        // Every refusal's line is one line.
        for refusal in [
            CertificateRefusal.unknownAuthority(trusted: "/ca.pem"), .hostNameMismatch(host: "db"), .expired(notAfter: Date()),
            .notYetValid(notBefore: Date()), .unverified(trusted: nil),
        ] {
            #expect(!DatabaseError.certificateRefused(endpoint: "db:5432", cause: refusal.cause).description.contains("\n"))
        }
    }

    @Test("read-only and refused certificates are exit 69 (isUnavailable); a rejected session is not")
    func unavailable() {
        #expect(DatabaseError.readOnly(operation: "migrate", reason: "hot standby").isUnavailable)
        #expect(DatabaseError.certificateRefused(endpoint: "db", cause: "expired").isUnavailable)
        #expect(!DatabaseError.rejected(endpoint: "db", reason: "password").isUnavailable)
    }
}
