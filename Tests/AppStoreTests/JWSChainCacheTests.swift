import Crypto
import Foundation
import StoreSimulator
import Testing
import X509

@testable import AppStore

/// The verified-chain cache must only ever save work: every payload's own signature is still checked with the leaf's
/// key, every use is inside every certificate's validity, and nothing that failed is remembered.
@Suite("JWS verified-chain cache")
struct JWSChainCacheTests {
    static let start = Date(timeIntervalSince1970: 1_761_962_975)
    let pki: AppleTestPKI
    let verifier: JWSVerifier

    init() throws {
        pki = try AppleTestPKI.generate(now: Self.start, validity: .seconds(30 * 86_400))
        verifier = JWSVerifier(rootCertificates: [pki.root], bundleID: "com.example")
    }

    private func signed(by pki: AppleTestPKI, at signedDate: Date, product: String = "com.example.product") throws -> String {
        var payload = MintedTransaction(productId: product)
        payload.signedDate = Int64(signedDate.timeIntervalSince1970 * 1000)
        return try pki.sign(payload: payload)
    }

    @Test("payloads under one chain validate it once and verify each with the leaf's key")
    func cachedOnce() async throws {
        for product in ["a", "b", "c"] {
            let payload = try await verifier.verifyTransaction(
                try signed(by: pki, at: Self.start, product: "com.example.\(product)"), environment: .sandbox, now: Self.start)
            #expect(payload.productId == "com.example.\(product)")
        }
        #expect(await verifier.cachedChainCount == 1)
    }

    @Test("a payload signed with another key under a cached chain is rejected")
    func otherKeyUnderCachedChain() async throws {
        _ = try await verifier.verifyTransaction(try signed(by: pki, at: Self.start), environment: .sandbox, now: Self.start)
        #expect(await verifier.cachedChainCount == 1)
        // The very same header (leaf, intermediate, root byte for byte), but the signature is not the leaf's.
        let impostor = AppleTestPKI(root: pki.root, intermediate: pki.intermediate, leaf: pki.leaf, leafKey: P256.Signing.PrivateKey())
        await #expect(throws: JWSVerificationError.badSignature) {
            try await verifier.verifyTransaction(try signed(by: impostor, at: Self.start), environment: .sandbox, now: Self.start)
        }
        var changed = MintedTransaction(productId: "com.example.yearly")
        changed.signedDate = Int64(Self.start.timeIntervalSince1970 * 1000)
        let tampered = AppleTestPKI.tamper(try signed(by: pki, at: Self.start), payloadJSON: try JSONEncoder().encode(changed))
        await #expect(throws: JWSVerificationError.badSignature) {
            try await verifier.verifyTransaction(tampered, environment: .sandbox, now: Self.start)
        }
    }

    @Test("a forged leaf under a cached intermediate is rejected and not cached")
    func forgedLeafUnderCachedIntermediate() async throws {
        _ = try await verifier.verifyTransaction(try signed(by: pki, at: Self.start), environment: .sandbox, now: Self.start)
        let forgerKey = P256.Signing.PrivateKey()
        let forgedLeaf = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: .init(forgerKey.publicKey),
            notValidBefore: pki.leaf.notValidBefore, notValidAfter: pki.leaf.notValidAfter, issuer: pki.intermediate.subject,
            subject: pki.leaf.subject, signatureAlgorithm: .ecdsaWithSHA256, extensions: pki.leaf.extensions,
            issuerPrivateKey: .init(forgerKey))
        let forger = AppleTestPKI(root: pki.root, intermediate: pki.intermediate, leaf: forgedLeaf, leafKey: forgerKey)
        for _ in 0..<2 {
            await expectChainInvalid {
                try await verifier.verifyTransaction(try signed(by: forger, at: Self.start), environment: .sandbox, now: Self.start)
            }
        }
        #expect(await verifier.cachedChainCount == 1)
    }

    @Test("a cached chain used at an instant outside a certificate's validity is rejected", arguments: [-2.0, 31.0, 400.0])
    func cachedChainOutsideValidity(days: Double) async throws {
        _ = try await verifier.verifyTransaction(try signed(by: pki, at: Self.start), environment: .sandbox, now: Self.start)
        #expect(await verifier.cachedChainCount == 1)
        let outside = Self.start.addingTimeInterval(days * 86_400)
        await expectChainInvalid {
            try await verifier.verifyTransaction(try signed(by: pki, at: outside), environment: .sandbox, now: Self.start)
        }
        // Inside the window again: still accepted from the cache.
        _ = try await verifier.verifyTransaction(
            try signed(by: pki, at: Self.start.addingTimeInterval(86_400)), environment: .sandbox, now: Self.start)
    }

    @Test("a chain that fails is never cached, and a good one after it still verifies")
    func failingChainNotCached() async throws {
        let expired = try signed(by: pki, at: Self.start.addingTimeInterval(60 * 86_400))
        for _ in 0..<2 {
            await expectChainInvalid { try await verifier.verifyTransaction(expired, environment: .sandbox, now: Self.start) }
        }
        let foreign = try AppleTestPKI.generate(now: Self.start)
        await expectChainInvalid {
            try await verifier.verifyTransaction(try signed(by: foreign, at: Self.start), environment: .sandbox, now: Self.start)
        }
        #expect(await verifier.cachedChainCount == 0)
        _ = try await verifier.verifyTransaction(try signed(by: pki, at: Self.start), environment: .sandbox, now: Self.start)
        #expect(await verifier.cachedChainCount == 1)
    }

    @Test("a cached chain is validated again after the cache lifetime")
    func lifetime() async throws {
        let short = JWSVerifier(rootCertificates: [pki.root], bundleID: "com.example", cacheLifetime: .seconds(60))
        _ = try await short.verifyTransaction(try signed(by: pki, at: Self.start), environment: .sandbox, now: Self.start)
        #expect(await short.cachedChainCount == 1)
        let later = Self.start.addingTimeInterval(120)
        _ = try await short.verifyTransaction(try signed(by: pki, at: later), environment: .sandbox, now: later)
        #expect(await short.cachedChainCount == 1)
    }

    private func expectChainInvalid(_ body: () async throws -> some Any) async {
        let error = await #expect(throws: JWSVerificationError.self) { _ = try await body() }
        guard case .chainInvalid? = error else {
            Issue.record("expected chainInvalid, got \(String(describing: error))")
            return
        }
    }
}
