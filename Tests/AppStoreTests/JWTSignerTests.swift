import Crypto
import Foundation
import SubreconCore
import Testing

@testable import AppStore

@Suite("ES256 bearer token")
struct JWTSignerTests {
    @Test("a token signed with testSigningKey.p8 has Apple's header and claims and verifies with the public key")
    func tokenShape() throws {
        let pem = try Vectors.text(Vectors.swiftResources + "/certs/testSigningKey.p8")
        let signer = try AppStoreJWTSigner(issuerID: "issuerId", keyID: "keyId", bundleID: "com.example", privateKeyPEM: pem)
        let now = Date(timeIntervalSince1970: 1_761_962_975)
        let token = try signer.token(now: now)
        let parts = token.value.split(separator: ".", omittingEmptySubsequences: false)
        try #require(parts.count == 3)
        #expect(!token.value.contains("="))
        let header = try JSONSerialization.jsonObject(with: try #require(Base64URL.decode(parts[0]))) as? [String: Any]
        let claims = try JSONSerialization.jsonObject(with: try #require(Base64URL.decode(parts[1]))) as? [String: Any]
        #expect(header?["alg"] as? String == "ES256")
        #expect(header?["kid"] as? String == "keyId")
        #expect(header?["typ"] as? String == "JWT")
        #expect(claims?["iss"] as? String == "issuerId")
        #expect(claims?["aud"] as? String == "appstoreconnect-v1")
        #expect(claims?["bid"] as? String == "com.example")
        let iat = try #require((claims?["iat"] as? NSNumber)?.intValue)
        let exp = try #require((claims?["exp"] as? NSNumber)?.intValue)
        #expect(iat == 1_761_962_975 - 60)
        #expect(exp > 1_761_962_975 + 4 * 60)
        #expect(exp - iat <= 3600)

        let publicKey = try P256.Signing.PrivateKey(pemRepresentation: pem).publicKey
        let signature = try P256.Signing.ECDSASignature(rawRepresentation: try #require(Base64URL.decode(parts[2])))
        #expect(publicKey.isValidSignature(signature, for: Data((parts[0] + "." + parts[1]).utf8)))
        #expect(!P256.Signing.PrivateKey().publicKey.isValidSignature(signature, for: Data((parts[0] + "." + parts[1]).utf8)))
    }

    @Test("a cached token is reused briefly but never close to or past its exp")
    func cache() async throws {
        let pem = try Vectors.text(Vectors.swiftResources + "/certs/testSigningKey.p8")
        let signer = try AppStoreJWTSigner(issuerID: "i", keyID: "k", bundleID: "b", privateKeyPEM: pem, lifetime: .seconds(300))
        let cache = AppStoreTokenCache(signer: signer, reuse: .seconds(120))
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        let first = try await cache.token(now: start)
        #expect(try await cache.token(now: start.addingTimeInterval(60)).value == first.value)
        let later = try await cache.token(now: start.addingTimeInterval(121))
        #expect(later.value != first.value)
        #expect(later.expiresAt > start.addingTimeInterval(121))
    }
}
