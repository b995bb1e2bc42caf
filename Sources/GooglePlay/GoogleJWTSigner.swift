import Crypto
import Foundation
import SubreconCore
import _CryptoExtras

/// Signs the RS256 assertion a service account exchanges for an OAuth access token
/// ("OAuth 2.0 for Server to Server Applications"; reference/revenuecat.md §4.1).
///
/// Header `{"alg":"RS256","typ":"JWT","kid":private_key_id}`; claims `iss` = client email, `scope` = the
/// androidpublisher scope, `aud` = the key's `token_uri`, `iat` = now, `exp` = `iat` + 3600 (Google's maximum).
/// RSASSA-PKCS1-v1_5 with SHA-256. The time is an argument.
public struct GoogleJWTSigner: Sendable, CustomStringConvertible {
    public let clientEmail: String
    public let keyID: String?
    public let audience: String
    public let scope: String
    static let lifetime: Int64 = 3600
    private let key: _RSA.Signing.PrivateKey

    public init(serviceAccount: GoogleServiceAccount, scope: String = GooglePlayConfiguration.scope) throws(GooglePlayConfigurationError) {
        guard let key = try? _RSA.Signing.PrivateKey(pemRepresentation: serviceAccount.privateKeyPEM) else { throw .invalidPrivateKey }
        self.key = key
        clientEmail = serviceAccount.clientEmail
        keyID = serviceAccount.privateKeyID
        audience = serviceAccount.tokenURI
        self.scope = scope
    }

    /// The compact JWT valid from `now` for one hour. Secret: send it, never log it.
    public func assertion(now: Date) throws -> String {
        let issuedAt = Int64(now.timeIntervalSince1970.rounded(.down))
        let header = Header(alg: "RS256", typ: "JWT", kid: keyID)
        let claims = Claims(iss: clientEmail, scope: scope, aud: audience, iat: issuedAt, exp: issuedAt + Self.lifetime)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let signingInput = Base64URL.encode(try encoder.encode(header)) + "." + Base64URL.encode(try encoder.encode(claims))
        let signature = try key.signature(for: SHA256.hash(data: Data(signingInput.utf8)), padding: .insecurePKCS1v1_5)
        return signingInput + "." + Base64URL.encode(signature.rawRepresentation)
    }

    public var description: String {
        "GoogleJWTSigner(clientEmail: \(clientEmail), keyID: \(keyID ?? "none"), audience: \(audience), key: <redacted>)"
    }

    public struct Header: Codable, Sendable, Hashable {
        public var alg: String
        public var typ: String
        public var kid: String?
    }

    public struct Claims: Codable, Sendable, Hashable {
        public var iss: String
        public var scope: String
        public var aud: String
        public var iat: Int64
        public var exp: Int64
    }
}
