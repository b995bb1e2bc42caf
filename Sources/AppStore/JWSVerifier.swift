import Crypto
import Foundation
import SubreconCore
import SwiftASN1
@_spi(FixedExpiryValidationTime) import X509

/// Verifies Apple's compact JWS (signed transactions and renewal info) before anything in them is believed.
///
/// Steps (apple.md §3.3): three segments; header `alg` ES256 with exactly three `x5c` certificates; leaf and
/// intermediate validated with swift-certificates against the configured roots only (`x5c[2]` is never a trust
/// anchor) at the payload's `signedDate`, plus Apple's OIDs; the ES256 signature over `header.payload` with the
/// leaf key; then the payload is decoded.
///
/// Validated chains are cached (`ChainCache`) by the exact header segment, which carries `alg` and the three `x5c`
/// certificates byte for byte, for 15 minutes (bounded): a payload under a cached header skips decoding the header,
/// parsing the certificates and the two ECDSA verifications of the chain, but its validation time must still lie
/// inside every certificate's validity (else the chain is validated again, and fails), and its own signature is
/// always verified with the leaf's key. A chain that fails is never cached. It does not check revocation (OCSP).
public final class JWSVerifier: Sendable {
    public let bundleID: String
    private let roots: CertificateStore
    let cache: ChainCache

    public init(rootCertificates: [Certificate], bundleID: String, cacheLifetime: Duration = .seconds(900), maximumCacheSize: Int = 32) {
        self.roots = CertificateStore(rootCertificates)
        self.bundleID = bundleID
        self.cache = ChainCache(lifetime: TimeInterval(cacheLifetime.components.seconds), capacity: max(1, maximumCacheSize))
    }

    /// Verifies a signed transaction, then checks its bundle id and environment (`Production` / `Sandbox`).
    public func verifyTransaction(
        _ jws: String, environment: StoreEnvironmentName, now: Date
    ) async throws(JWSVerificationError) -> JWSTransactionDecodedPayload {
        try await verifySignedTransaction(jws, environment: environment, now: now).payload
    }

    /// `verifyTransaction`, also naming the subject of the leaf certificate that signed it (for `subrecon explain`).
    public func verifySignedTransaction(
        _ jws: String, environment: StoreEnvironmentName, now: Date
    ) async throws(JWSVerificationError) -> (payload: JWSTransactionDecodedPayload, signer: String) {
        let (payload, leaf) = try await verifyWithLeaf(jws, as: JWSTransactionDecodedPayload.self, now: now)
        guard payload.bundleId == bundleID else { throw .wrongBundleID(expected: bundleID, found: payload.bundleId) }
        guard payload.environment == environment.rawValue else {
            throw .wrongEnvironment(expected: environment.rawValue, found: payload.environment)
        }
        return (payload, String(describing: leaf.subject))
    }

    /// Verifies signed renewal info, then checks its environment (renewal info carries no bundle id).
    public func verifyRenewalInfo(
        _ jws: String, environment: StoreEnvironmentName, now: Date
    ) async throws(JWSVerificationError) -> JWSRenewalInfoDecodedPayload {
        let payload = try await verify(jws, as: JWSRenewalInfoDecodedPayload.self, now: now)
        guard payload.environment == environment.rawValue else {
            throw .wrongEnvironment(expected: environment.rawValue, found: payload.environment)
        }
        return payload
    }

    /// Verifies format, chain and signature and decodes the payload; no bundle or environment check.
    /// The chain is validated at the payload's `signedDate`, or at `now` when it has none.
    public func verify<Payload: Decodable>(
        _ jws: String, as type: Payload.Type, now: Date
    ) async throws(JWSVerificationError) -> Payload {
        try await verifyWithLeaf(jws, as: type, now: now).payload
    }

    /// `verify`, also returning the leaf certificate that signed the payload.
    func verifyWithLeaf<Payload: Decodable>(
        _ jws: String, as type: Payload.Type, now: Date
    ) async throws(JWSVerificationError) -> (payload: Payload, leaf: Certificate) {
        let dots = jws.utf8.indices.filter { jws.utf8[$0] == UInt8(ascii: ".") }
        guard dots.count == 2 else { throw .invalidFormat("expected 3 segments, found \(dots.count + 1)") }
        let segments = [jws[..<dots[0]], jws[jws.utf8.index(after: dots[0])..<dots[1]], jws[jws.utf8.index(after: dots[1])...]]
        let headerSegment = String(segments[0])
        let cached = await cache.chain(forHeader: headerSegment, now: now)
        // A cached header decoded and passed the header checks before; anything else goes through them now, in order.
        let headerData = cached == nil ? Base64URL.decode(segments[0]) : Data()
        guard let headerData, let payloadData = Base64URL.decode(segments[1]), let signatureData = Base64URL.decode(segments[2])
        else { throw .invalidFormat("a segment is not base64url") }
        let x5c = cached == nil ? try Self.certificates(inHeader: headerData) : []
        guard let signed = try? JSONDecoder.appStore.decode(JWSSignedDate.self, from: payloadData) else {
            throw .invalidFormat("payload is not JSON")
        }
        let validationTime = signed.signedDate ?? now
        let chain: VerifiedChain
        if let cached, cached.covers(validationTime) {
            chain = cached
        } else {
            let certificates = try x5c.isEmpty ? Self.certificates(inHeader: Base64URL.decode(segments[0]) ?? Data()) : x5c
            chain = try await validateChain(certificates, header: headerSegment, validationTime: validationTime, now: now)
        }
        guard let signature = try? P256.Signing.ECDSASignature(rawRepresentation: signatureData),
            chain.leafKey.isValidSignature(signature, for: Data(jws.utf8[..<dots[1]]))
        else { throw .badSignature }
        do {
            return (try AppStoreJSON.decode(Payload.self, from: payloadData), chain.leaf)
        } catch {
            throw .invalidFormat("payload does not decode as \(Payload.self)")
        }
    }

    /// The header's checks (ES256, exactly three `x5c` entries) and its `x5c` strings.
    private static func certificates(inHeader headerData: Data) throws(JWSVerificationError) -> [String] {
        guard let header = try? JSONDecoder().decode(Header.self, from: SourceText.sanitizedJSON(headerData)) else {
            throw .invalidFormat("header is not JSON")
        }
        guard header.alg == "ES256" else { throw .invalidFormat("alg is \(header.alg ?? "missing"), expected ES256") }
        guard let x5c = header.x5c else { throw .invalidFormat("header has no x5c") }
        guard x5c.count == 3 else { throw .invalidFormat("x5c has \(x5c.count) certificates, expected 3") }
        return x5c
    }

    /// Validates leaf and intermediate at `validationTime` and caches the chain; a failing chain throws, uncached.
    private func validateChain(
        _ x5c: [String], header: String, validationTime: Date, now: Date
    ) async throws(JWSVerificationError) -> VerifiedChain {
        guard let leafDER = Data(base64Encoded: x5c[0]), let intermediateDER = Data(base64Encoded: x5c[1]),
            let leaf = try? Certificate(derEncoded: Array(leafDER)),
            let intermediate = try? Certificate(derEncoded: Array(intermediateDER))
        else { throw .invalidCertificate("x5c entry is not a base64 DER certificate") }
        var verifier = Verifier(rootCertificates: roots) {
            RFC5280Policy(fixedExpiryValidationTime: validationTime)
            AppleOIDPolicy()
        }
        let result = await verifier.validate(leaf: leaf, intermediates: CertificateStore([intermediate]))
        switch result {
        case .validCertificate(let validated):
            guard let leafKey = P256.Signing.PublicKey(leaf.publicKey) else {
                throw .invalidCertificate("leaf key is not P-256")
            }
            let chain = VerifiedChain(
                leaf: leaf, leafKey: leafKey, validFrom: validated.map(\.notValidBefore).max() ?? validationTime,
                validUntil: validated.map(\.notValidAfter).min() ?? validationTime, cachedAt: now)
            await cache.insert(chain, forHeader: header, now: now)
            return chain
        case .couldNotValidate(let failures):
            let reasons = Set(failures.map { $0.policyFailureReason.description }).sorted()
            throw .chainInvalid(reason: reasons.isEmpty ? "no chain to a trusted root" : reasons.joined(separator: "; "))
        }
    }

    struct Header: Decodable {
        var alg: String?
        var x5c: [String]?
    }
}
