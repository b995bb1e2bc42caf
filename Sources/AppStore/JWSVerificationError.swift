/// Why a signed payload (JWS) from Apple was not believed. Messages are for operators and contain no secrets.
public enum JWSVerificationError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Not a compact JWS, wrong `alg`, missing `x5c` or not three certificates, undecodable JSON.
    case invalidFormat(String)
    /// An `x5c` entry is not a base64 DER certificate, or the leaf key is not P-256.
    case invalidCertificate(String)
    /// The chain does not lead to a trusted root, has expired, or lacks Apple's OIDs.
    case chainInvalid(reason: String)
    /// The ES256 signature does not match `header.payload` under the leaf's key.
    case badSignature
    case wrongBundleID(expected: String, found: String?)
    case wrongEnvironment(expected: String, found: String?)

    public var description: String {
        switch self {
        case .invalidFormat(let detail): "signed payload is malformed: \(detail)"
        case .invalidCertificate(let detail): "signed payload carries an invalid certificate: \(detail)"
        case .chainInvalid(let reason): "signed payload's certificate chain is not trusted: \(reason)"
        case .badSignature: "signed payload's ES256 signature does not verify"
        case .wrongBundleID(let expected, let found):
            "signed transaction is for bundle id \(found ?? "<none>"), expected \(expected)"
        case .wrongEnvironment(let expected, let found):
            "signed payload is from environment \(found ?? "<none>"), expected \(expected)"
        }
    }
}
