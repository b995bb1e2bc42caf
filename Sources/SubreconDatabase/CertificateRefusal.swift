import Foundation
import Logging
import PostgresNIO
import SubreconCore
import SubreconPorts

/// Why the job refused the TLS certificate a database server presented (docs/CONTRACT.md, "The session"), as one
/// short cause for the operator: never the TLS library's error stack, whose entries name the files it was built from.
public enum CertificateRefusal: Sendable, Hashable {
    /// No CA the job trusts signed it: `trusted` is the `sslrootcert` file, nil for the system's trust store.
    case unknownAuthority(trusted: String?)
    /// It does not name `host`, the host the job connected to (`verify-full`).
    case hostNameMismatch(host: String)
    /// Its validity ended at `notAfter`.
    case expired(notAfter: Date)
    /// Its validity begins at `notBefore`.
    case notYetValid(notBefore: Date)
    /// The chain was refused and the certificate could not be read again to tell why.
    case unverified(trusted: String?)

    /// The cause, starting with its short name (`unknown CA`, `host name mismatch`, `expired`, `not yet valid`).
    public var cause: String {
        switch self {
        case .unknownAuthority(let trusted):
            "unknown CA: the server's certificate is not signed by a CA in \(Self.trustName(trusted))"
        case .hostNameMismatch(let host):
            "host name mismatch: the server's certificate does not name '\(host)' (sslmode=verify-full; connect by a name "
                + "it lists, or use verify-ca)"
        case .expired(let notAfter):
            "expired: the server's certificate was valid until \(Self.instant(notAfter))"
        case .notYetValid(let notBefore):
            "not yet valid: the server's certificate is valid from \(Self.instant(notBefore)) (check the clocks)"
        case .unverified(let trusted):
            "certificate not verified (unknown CA or expired) against \(Self.trustName(trusted))"
        }
    }

    static func trustName(_ trusted: String?) -> String {
        trusted.map { "sslrootcert '\($0)'" } ?? "the system trust store (set sslrootcert to the CA that signed it)"
    }

    static func instant(_ date: Date) -> String { ISO8601.string(date) }

    /// The refusal `error` reports (a connection error's underlying TLS error, or one itself); nil when it is not a
    /// refused certificate. A refused chain is `unverified` until `diagnosed` reads the certificate.
    public static func refusal(in error: any Error, host: String, trusted: String?) -> CertificateRefusal? {
        var error = error
        if let psql = error as? PSQLError, let underlying = psql.underlying { error = underlying }
        if let extra = error as? NIOSSLExtraError,
            extra == .failedToValidateHostname || extra == .serverHostnameImpossibleToMatch
        {
            return .hostNameMismatch(host: host)
        }
        guard let ssl = error as? NIOSSLError, reasons(ssl).contains("CERTIFICATE_VERIFY_FAILED") else { return nil }
        return .unverified(trusted: trusted)
    }

    /// The BoringSSL reason codes of a TLS error (`CERTIFICATE_VERIFY_FAILED`, `WRONG_VERSION_NUMBER`, ...).
    static func reasons(_ error: NIOSSLError) -> [String] {
        switch error {
        case .handshakeFailed(.sslError(let stack)), .handshakeFailed(.unknownError(let stack)),
            .shutdownFailed(.sslError(let stack)), .shutdownFailed(.unknownError(let stack)):
            stack.map { reasonCode("\($0)") }
        default: []
        }
    }

    /// The reason code of one BoringSSL error entry (`Error: 268435581 error:1000007d:SSL
    /// routines:OPENSSL_internal:CERTIFICATE_VERIFY_FAILED at /build/…/handshake.cc:393` → `CERTIFICATE_VERIFY_FAILED`):
    /// nothing from the first `/` on (the build path), then the last `:`-separated part; `unknown` when none is left.
    static func reasonCode(_ entry: String) -> String {
        var text = entry.prefix { $0 != "/" }.trimmingCharacters(in: .whitespaces)
        if text == "at" || text.hasSuffix(" at") { text = String(text.dropLast(2)) }
        let code = text.split(separator: ":").last.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
        return code.isEmpty ? "unknown" : code
    }

    /// A TLS failure that is not a refused certificate, in one line without the library's text: `TLS handshake
    /// failed (WRONG_VERSION_NUMBER)`. Nil when `error` is not a TLS error.
    static func handshakeSummary(_ error: any Error) -> String? {
        if let extra = error as? NIOSSLExtraError {
            return "TLS failed (\(String(describing: extra).split(separator: ":").first.map(String.init) ?? "NIOSSLExtraError"))"
        }
        guard let ssl = error as? NIOSSLError else { return nil }
        let reasons = reasons(ssl)
        switch ssl {
        case .handshakeFailed: return "TLS handshake failed" + (reasons.isEmpty ? "" : " (\(reasons.joined(separator: ", ")))")
        case .uncleanShutdown: return "the server closed the TLS session uncleanly"
        default: return "TLS failed (\(ssl.caseName))"
        }
    }

    /// How a certificate within reach of a trusted chain is judged by its dates alone: a refused chain whose leaf is
    /// outside its validity at `now` is `expired` / `notYetValid`, else no trusted CA signed it.
    public static func judge(notBefore: Date, notAfter: Date, now: Date, trusted: String?) -> CertificateRefusal {
        if now > notAfter { return .expired(notAfter: notAfter) }
        if now < notBefore { return .notYetValid(notBefore: notBefore) }
        return .unknownAuthority(trusted: trusted)
    }
}

extension NIOSSLError {
    /// The case's name only (`handshakeFailed`), never its payload.
    fileprivate var caseName: String {
        String(String(describing: self).prefix { $0 != "(" })
    }
}
