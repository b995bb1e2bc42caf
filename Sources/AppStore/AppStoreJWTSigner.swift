import Crypto
import Foundation
import SubreconCore

/// Signs the ES256 bearer tokens the App Store Server API requires (apple.md §2).
///
/// Header `{alg: ES256, kid, typ: JWT}`, claims `{iss, iat, exp, aud: "appstoreconnect-v1", bid}`.
/// `iat` is backdated 60 s against clock skew; `exp - iat` never exceeds 60 minutes. The time is an argument.
public struct AppStoreJWTSigner: Sendable, CustomStringConvertible {
    public let issuerID: String
    public let keyID: String
    public let bundleID: String
    /// How long a token is valid after `now` (clamped to 5...20 minutes).
    public let lifetime: Duration
    private let key: P256.Signing.PrivateKey

    /// The audience Apple requires.
    public static let audience = "appstoreconnect-v1"
    static let backdate: TimeInterval = 60

    /// - Throws: `.invalidPrivateKey` when `privateKeyPEM` is not a P-256 key in PEM form.
    public init(
        issuerID: String, keyID: String, bundleID: String, privateKeyPEM: String, lifetime: Duration = .seconds(600)
    ) throws(AppStoreConfigurationError) {
        guard let key = try? P256.Signing.PrivateKey(pemRepresentation: privateKeyPEM) else {
            throw .invalidPrivateKey
        }
        self.issuerID = issuerID
        self.keyID = keyID
        self.bundleID = bundleID
        self.key = key
        self.lifetime = min(max(lifetime, .seconds(300)), .seconds(1200))
    }

    /// Builds a signer from the configuration's credentials.
    public init(configuration: AppStoreConfiguration) throws(AppStoreConfigurationError) {
        try self.init(
            issuerID: configuration.issuerID, keyID: configuration.keyID, bundleID: configuration.bundleID,
            privateKeyPEM: configuration.privateKeyPEM)
    }

    /// A signed token valid from `now - 60 s` to `now + lifetime`.
    public func token(now: Date) throws -> AppStoreToken {
        let issuedAt = Int((now.timeIntervalSince1970 - Self.backdate).rounded(.down))
        let expiresAt = Int((now.timeIntervalSince1970 + Double(lifetime.components.seconds)).rounded(.down))
        let header = Header(alg: "ES256", kid: keyID, typ: "JWT")
        let claims = Claims(iss: issuerID, iat: issuedAt, exp: expiresAt, aud: Self.audience, bid: bundleID)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let signingInput = Base64URL.encode(try encoder.encode(header)) + "." + Base64URL.encode(try encoder.encode(claims))
        let signature = try key.signature(for: Data(signingInput.utf8))
        let token = signingInput + "." + Base64URL.encode(signature.rawRepresentation)
        return AppStoreToken(
            value: token, issuedAt: Date(timeIntervalSince1970: TimeInterval(issuedAt)),
            expiresAt: Date(timeIntervalSince1970: TimeInterval(expiresAt)))
    }

    public var description: String {
        "AppStoreJWTSigner(issuerID: \(issuerID), keyID: \(keyID), bundleID: \(bundleID), key: <redacted>)"
    }

    struct Header: Codable {
        var alg: String
        var kid: String
        var typ: String
    }
    struct Claims: Codable {
        var iss: String
        var iat: Int
        var exp: Int
        var aud: String
        var bid: String
    }
}

/// A signed bearer token and its validity window. `description` hides the token.
public struct AppStoreToken: Sendable, CustomStringConvertible {
    /// The compact JWT. Secret: send it, never log it.
    public let value: String
    public let issuedAt: Date
    public let expiresAt: Date

    public var description: String { "AppStoreToken(<redacted>, expires: \(expiresAt))" }
}

/// Reuses a token for a short while (never past its `exp`), so a run does not sign one per request.
actor AppStoreTokenCache {
    private let signer: AppStoreJWTSigner
    private let reuse: TimeInterval
    private var current: (token: AppStoreToken, minted: Date)?

    init(signer: AppStoreJWTSigner, reuse: Duration = .seconds(120)) {
        self.signer = signer
        self.reuse = TimeInterval(reuse.components.seconds)
    }

    func token(now: Date) throws -> AppStoreToken {
        if let current, now >= current.minted, now.timeIntervalSince(current.minted) < reuse,
            current.token.expiresAt.timeIntervalSince(now) > 60
        {
            return current.token
        }
        let token = try signer.token(now: now)
        current = (token, now)
        return token
    }
}
