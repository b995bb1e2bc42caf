import Crypto
import Foundation
import StoreSimulator
import Testing
import X509

@testable import AppStore

@Suite("JWS verification against Apple's test vectors")
struct JWSVerifierVectorTests {
    let verifier: JWSVerifier

    init() throws {
        verifier = JWSVerifier(rootCertificates: [try Vectors.testCA()], bundleID: "com.example")
    }

    @Test("Apple's signed transaction verifies against testCA and decodes")
    func transactionVerifies() async throws {
        let payload = try await verifier.verifyTransaction(
            try Vectors.signedData("transactionInfo"), environment: .sandbox, now: .vectorValidationTime)
        #expect(payload.environment == "Sandbox")
        #expect(payload.bundleId == "com.example")
        #expect(payload.signedDate == Date(timeIntervalSince1970: 1_672_956_154))
    }

    @Test("Apple's signed renewal info verifies (no bundle id check) and decodes")
    func renewalVerifies() async throws {
        let payload = try await verifier.verifyRenewalInfo(
            try Vectors.signedData("renewalInfo"), environment: .sandbox, now: .vectorValidationTime)
        #expect(payload.environment == "Sandbox")
    }

    @Test("a transaction for another bundle id is rejected")
    func otherBundleRejected() async throws {
        let other = JWSVerifier(rootCertificates: [try Vectors.testCA()], bundleID: "com.example.x")
        await #expect(throws: JWSVerificationError.wrongBundleID(expected: "com.example.x", found: "com.example")) {
            try await other.verifyTransaction(try Vectors.signedData("transactionInfo"), environment: .sandbox, now: .vectorValidationTime)
        }
    }

    @Test("a sandbox transaction is rejected by a production check")
    func wrongEnvironmentRejected() async throws {
        await #expect(throws: JWSVerificationError.wrongEnvironment(expected: "Production", found: "Sandbox")) {
            try await verifier.verifyTransaction(
                try Vectors.signedData("transactionInfo"), environment: .production, now: .vectorValidationTime)
        }
    }

    @Test("the wrongBundleId vector is rejected")
    func wrongBundleIdVector() async throws {
        await #expect(throws: JWSVerificationError.wrongBundleID(expected: "com.example", found: nil)) {
            try await verifier.verifyTransaction(try Vectors.signedData("wrongBundleId"), environment: .sandbox, now: .vectorValidationTime)
        }
    }

    @Test("a header without x5c is a format error")
    func missingX5C() async throws {
        let error = await #expect(throws: JWSVerificationError.self) {
            try await verifier.verify(try Vectors.signedData("missingX5CHeaderClaim"), as: JWSSignedDate.self, now: .vectorValidationTime)
        }
        guard case .invalidFormat? = error else {
            Issue.record("expected invalidFormat, got \(String(describing: error))")
            return
        }
    }

    @Test("strings that are not compact JWS are format errors", arguments: ["a.b.c.d", "a.b.c", "", "abc"])
    func notJWS(_ input: String) async {
        let error = await #expect(throws: JWSVerificationError.self) {
            try await verifier.verify(input, as: JWSSignedDate.self, now: .vectorValidationTime)
        }
        guard case .invalidFormat? = error else {
            Issue.record("expected invalidFormat, got \(String(describing: error))")
            return
        }
    }

    @Test("test-signed data does not verify against the real Apple Root CA - G3")
    func realRootRejectsTestChain() async throws {
        let production = JWSVerifier(rootCertificates: [try AppStoreConfiguration.appleRootCAG3()], bundleID: "com.example")
        await expectChainInvalid {
            try await production.verifyTransaction(
                try Vectors.signedData("transactionInfo"), environment: .sandbox, now: .vectorValidationTime)
        }
    }

    @Test("a chain validated after its expiry (2042) is rejected")
    func expiredChain() async throws {
        // wrongBundleId has no signedDate, so the chain is checked at `now`.
        await expectChainInvalid(mentioning: "expired") {
            try await verifier.verify(try Vectors.signedData("wrongBundleId"), as: JWSSignedDate.self, now: .afterTestChainExpiry)
        }
        let minted = try mint(leaf: "testLeaf.pem", intermediate: "testIntermediate.pem", signedDate: .afterTestChainExpiry)
        await expectChainInvalid { try await verifier.verify(minted, as: JWSSignedDate.self, now: .vectorValidationTime) }
    }

    @Test("a leaf without Apple's receipt-signing OID is rejected")
    func wrongLeafOID() async throws {
        let minted = try mint(leaf: "testInvalidOIDLeaf.pem", intermediate: "testIntermediate.pem")
        await expectChainInvalid(mentioning: "6.11.1") {
            try await verifier.verify(minted, as: JWSSignedDate.self, now: .vectorValidationTime)
        }
    }

    @Test("an intermediate without Apple's WWDR OID is rejected")
    func wrongIntermediateOID() async throws {
        let minted = try mint(leaf: "testInvalidIntermediateLeaf.pem", intermediate: "testInvalidOIDIntermediate.pem")
        await expectChainInvalid(mentioning: "6.2.1") {
            try await verifier.verify(minted, as: JWSSignedDate.self, now: .vectorValidationTime)
        }
    }

    @Test("a JWS minted with testLeaf.key and the PEM chain verifies, and tampering breaks it")
    func mintedFromPEMFiles() async throws {
        let minted = try mint(leaf: "testLeaf.pem", intermediate: "testIntermediate.pem", productID: "com.example.monthly")
        let payload = try await verifier.verifyTransaction(minted, environment: .sandbox, now: .vectorValidationTime)
        #expect(payload.productId == "com.example.monthly")
        #expect(payload.expiresDate == Date(timeIntervalSince1970: 1_698_149_000))

        var changed = MintedTransaction(productId: "com.example.yearly")
        changed.signedDate = MintedTransaction().signedDate
        let tampered = AppleTestPKI.tamper(minted, payloadJSON: try JSONEncoder().encode(changed))
        await #expect(throws: JWSVerificationError.badSignature) {
            try await verifier.verifyTransaction(tampered, environment: .sandbox, now: .vectorValidationTime)
        }
    }

    @Test("the x5c root is ignored: a self-consistent chain from another root is rejected")
    func x5cRootIsNotTrusted() async throws {
        let foreign = try AppleTestPKI.generate(now: .vectorValidationTime)
        let jws = try foreign.sign(payload: MintedTransaction())
        await expectChainInvalid { try await verifier.verify(jws, as: JWSSignedDate.self, now: .vectorValidationTime) }
        // ... and accepted once its root is trusted.
        let trusting = JWSVerifier(rootCertificates: [foreign.root], bundleID: "com.example")
        let payload = try await trusting.verifyTransaction(jws, environment: .sandbox, now: .vectorValidationTime)
        #expect(payload.transactionId == "23456")
    }

    private func mint(
        leaf: String, intermediate: String, signedDate: Date = .vectorValidationTime, productID: String = "com.example.product"
    ) throws -> String {
        let pki = AppleTestPKI(
            root: try Vectors.javaCertificate("testCA.pem"), intermediate: try Vectors.javaCertificate(intermediate),
            leaf: try Vectors.javaCertificate(leaf), leafKey: try Vectors.leafKey())
        var payload = MintedTransaction(productId: productID)
        payload.signedDate = Int64(signedDate.timeIntervalSince1970 * 1000)
        return try pki.sign(payload: payload)
    }

    private func expectChainInvalid(mentioning needle: String? = nil, _ body: () async throws -> some Any) async {
        let error = await #expect(throws: JWSVerificationError.self) { _ = try await body() }
        guard case .chainInvalid(let reason)? = error else {
            Issue.record("expected chainInvalid, got \(String(describing: error))")
            return
        }
        if let needle { #expect(reason.contains(needle), "reason: \(reason)") }
    }
}

struct MintedTransaction: Codable {
    var originalTransactionId = "12345"
    var transactionId = "23456"
    var bundleId = "com.example"
    var productId = "com.example.product"
    var expiresDate: Int64 = 1_698_149_000_000
    var environment = "Sandbox"
    var signedDate: Int64 = 1_761_962_975_000
}
