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
/// leaf key; then the payload is decoded. Validated chains are cached for 15 minutes (bounded), keyed by leaf and
/// intermediate, and reused only for validation times inside the chain's validity window.
/// It does not check revocation (OCSP).
public final class JWSVerifier: Sendable {
    public let bundleID: String
    private let roots: CertificateStore
    private let cache: ChainCache

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
        let segments = jws.split(separator: ".", omittingEmptySubsequences: false)
        guard segments.count == 3 else { throw .invalidFormat("expected 3 segments, found \(segments.count)") }
        guard let headerData = Base64URL.decode(segments[0]), let payloadData = Base64URL.decode(segments[1]),
            let signatureData = Base64URL.decode(segments[2])
        else { throw .invalidFormat("a segment is not base64url") }
        guard let header = try? JSONDecoder().decode(Header.self, from: SourceText.sanitizedJSON(headerData)) else {
            throw .invalidFormat("header is not JSON")
        }
        guard header.alg == "ES256" else { throw .invalidFormat("alg is \(header.alg ?? "missing"), expected ES256") }
        guard let x5c = header.x5c else { throw .invalidFormat("header has no x5c") }
        guard x5c.count == 3 else { throw .invalidFormat("x5c has \(x5c.count) certificates, expected 3") }
        let decoder = JSONDecoder.appStore
        guard let signed = try? decoder.decode(JWSSignedDate.self, from: payloadData) else {
            throw .invalidFormat("payload is not JSON")
        }
        guard let leafDER = Data(base64Encoded: x5c[0]), let intermediateDER = Data(base64Encoded: x5c[1]),
            let leaf = try? Certificate(derEncoded: Array(leafDER)),
            let intermediate = try? Certificate(derEncoded: Array(intermediateDER))
        else { throw .invalidCertificate("x5c entry is not a base64 DER certificate") }

        let validationTime = signed.signedDate ?? now
        try await validateChain(
            leaf: leaf, intermediate: intermediate, key: ChainKey(leaf: leafDER, intermediate: intermediateDER),
            validationTime: validationTime, now: now)

        guard let publicKey = P256.Signing.PublicKey(leaf.publicKey) else {
            throw .invalidCertificate("leaf key is not P-256")
        }
        guard let signature = try? P256.Signing.ECDSASignature(rawRepresentation: signatureData),
            publicKey.isValidSignature(signature, for: Data((segments[0] + "." + segments[1]).utf8))
        else { throw .badSignature }
        do {
            return (try AppStoreJSON.decode(Payload.self, from: payloadData), leaf)
        } catch {
            throw .invalidFormat("payload does not decode as \(Payload.self)")
        }
    }

    private func validateChain(
        leaf: Certificate, intermediate: Certificate, key: ChainKey, validationTime: Date, now: Date
    ) async throws(JWSVerificationError) {
        if await cache.contains(key, validationTime: validationTime, now: now) { return }
        var verifier = Verifier(rootCertificates: roots) {
            RFC5280Policy(fixedExpiryValidationTime: validationTime)
            AppleOIDPolicy()
        }
        let result = await verifier.validate(leaf: leaf, intermediates: CertificateStore([intermediate]))
        switch result {
        case .validCertificate(let chain):
            let notBefore = chain.map(\.notValidBefore).max() ?? validationTime
            let notAfter = chain.map(\.notValidAfter).min() ?? validationTime
            await cache.insert(key, validFrom: notBefore, until: notAfter, now: now)
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

struct ChainKey: Hashable, Sendable {
    var leaf: Data
    var intermediate: Data
}

/// Validated chains, by (leaf, intermediate), for a limited time and number.
actor ChainCache {
    private struct Entry {
        var validFrom: Date
        var validUntil: Date
        var cachedAt: Date
    }
    private let lifetime: TimeInterval
    private let capacity: Int
    private var entries: [ChainKey: Entry] = [:]

    init(lifetime: TimeInterval, capacity: Int) {
        self.lifetime = lifetime
        self.capacity = capacity
    }

    func contains(_ key: ChainKey, validationTime: Date, now: Date) -> Bool {
        guard let entry = entries[key] else { return false }
        guard now.timeIntervalSince(entry.cachedAt) < lifetime, now >= entry.cachedAt else {
            entries[key] = nil
            return false
        }
        return validationTime >= entry.validFrom && validationTime <= entry.validUntil
    }

    func insert(_ key: ChainKey, validFrom: Date, until validUntil: Date, now: Date) {
        entries = entries.filter { now.timeIntervalSince($0.value.cachedAt) < lifetime }
        if entries.count >= capacity, let oldest = entries.min(by: { $0.value.cachedAt < $1.value.cachedAt }) {
            entries[oldest.key] = nil
        }
        entries[key] = Entry(validFrom: validFrom, validUntil: validUntil, cachedAt: now)
    }
}
