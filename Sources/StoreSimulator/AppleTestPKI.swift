import Crypto
import Foundation
import SubreconCore
import SwiftASN1
import X509

/// A throwaway Apple-shaped PKI for the simulator: a P-256 root, an intermediate carrying Apple's WWDR OID
/// (1.2.840.113635.100.6.2.1) and a leaf carrying the receipt-signing OID (1.2.840.113635.100.6.11.1), both as
/// non-critical extensions with a NULL value, like Apple's. It signs compact JWS with `x5c` = [leaf, intermediate, root].
///
/// Trust only `root` (e.g. via `APP_STORE_ROOT_CERTIFICATES`); never use it for real traffic.
public struct AppleTestPKI: Sendable {
    public let root: Certificate
    public let intermediate: Certificate
    public let leaf: Certificate
    private let leafKey: P256.Signing.PrivateKey
    /// The base64url JWS header (constant for a chain), built once: re-encoding three certificates and a JSON
    /// header per signature was the simulator's largest cost in the benchmark's profile.
    private let encodedHeader: String?

    /// 1.2.840.113635.100.6.2.1
    public static let wwdrIntermediateOID: ASN1ObjectIdentifier = [1, 2, 840, 113_635, 100, 6, 2, 1]
    /// 1.2.840.113635.100.6.11.1
    public static let receiptSigningOID: ASN1ObjectIdentifier = [1, 2, 840, 113_635, 100, 6, 11, 1]

    /// Wraps an existing chain and the leaf's signing key (e.g. Apple's published test certificates).
    public init(root: Certificate, intermediate: Certificate, leaf: Certificate, leafKey: P256.Signing.PrivateKey) {
        self.root = root
        self.intermediate = intermediate
        self.leaf = leaf
        self.leafKey = leafKey
        self.encodedHeader = try? Self.header(root: root, intermediate: intermediate, leaf: leaf)
    }

    private static func header(root: Certificate, intermediate: Certificate, leaf: Certificate) throws -> String {
        let x5c = try [leaf, intermediate, root].map { Data(try der($0)).base64EncodedString() }
        let header = try JSONSerialization.data(
            withJSONObject: ["alg": "ES256", "typ": "JWT", "x5c": x5c], options: [.sortedKeys])
        return base64URL(header)
    }

    /// Generates a fresh chain valid from a day before `now` for `validity`.
    public static func generate(
        now: Date = Date(), validity: Duration = .seconds(2 * 365 * 86_400), name: String = "subrecon simulator"
    ) throws -> AppleTestPKI {
        let notBefore = now.addingTimeInterval(-86_400)
        let notAfter = now.addingTimeInterval(TimeInterval(validity.components.seconds))
        let rootKey = P256.Signing.PrivateKey()
        let intermediateKey = P256.Signing.PrivateKey()
        let leafKey = P256.Signing.PrivateKey()
        let rootName = try DistinguishedName {
            CommonName("\(name) Root CA")
            OrganizationName("subrecon test PKI")
        }
        let intermediateName = try DistinguishedName {
            CommonName("\(name) WWDR Intermediate")
            OrganizationName("subrecon test PKI")
        }
        let leafName = try DistinguishedName {
            CommonName("\(name) Receipt Signing")
            OrganizationName("subrecon test PKI")
        }
        let null: ArraySlice<UInt8> = [0x05, 0x00]
        let root = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: .init(rootKey.publicKey),
            notValidBefore: notBefore, notValidAfter: notAfter, issuer: rootName, subject: rootName,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
                SubjectKeyIdentifier(hash: Certificate.PublicKey(rootKey.publicKey))
            },
            issuerPrivateKey: .init(rootKey))
        let intermediate = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: .init(intermediateKey.publicKey),
            notValidBefore: notBefore, notValidAfter: notAfter, issuer: rootName, subject: intermediateName,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
                Certificate.Extension(oid: wwdrIntermediateOID, critical: false, value: null)
            },
            issuerPrivateKey: .init(rootKey))
        let leaf = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: .init(leafKey.publicKey),
            notValidBefore: notBefore, notValidAfter: notAfter, issuer: intermediateName, subject: leafName,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
                Certificate.Extension(oid: receiptSigningOID, critical: false, value: null)
            },
            issuerPrivateKey: .init(intermediateKey))
        return AppleTestPKI(root: root, intermediate: intermediate, leaf: leaf, leafKey: leafKey)
    }

    /// The root in PEM form, for a trust store file.
    public func rootPEM() throws -> String {
        try root.serializeAsPEM().pemString
    }

    /// The root in DER form.
    public func rootDER() throws -> [UInt8] {
        try Self.der(root)
    }

    /// A compact JWS of `payload` (JSON), header `{alg: ES256, typ: JWT, x5c: [leaf, intermediate, root]}`.
    public func sign(payload: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return try sign(payloadJSON: try encoder.encode(payload))
    }

    /// A compact JWS over the given payload bytes.
    public func sign(payloadJSON: Data) throws -> String {
        let header = try encodedHeader ?? Self.header(root: root, intermediate: intermediate, leaf: leaf)
        let input = header + "." + Self.base64URL(payloadJSON)
        let signature = try leafKey.signature(for: Data(input.utf8))
        return input + "." + Self.base64URL(signature.rawRepresentation)
    }

    /// `jws` with its payload replaced by `payloadJSON` but the original signature kept: must fail verification.
    public static func tamper(_ jws: String, payloadJSON: Data) -> String {
        let parts = jws.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3 else { return jws }
        return parts[0] + "." + base64URL(payloadJSON) + "." + parts[2]
    }

    static func der(_ certificate: Certificate) throws -> [UInt8] {
        var serializer = DER.Serializer()
        try serializer.serialize(certificate)
        return serializer.serializedBytes
    }

    /// base64url without padding (the shared implementation in SubreconCore).
    static func base64URL(_ data: Data) -> String { Base64URL.encode(data) }
}
