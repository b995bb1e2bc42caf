import Foundation
import SubreconCore
import Testing
import X509

@testable import AppStore

/// The committed seeds of the JWS/x5c fuzz entries ('J', 'K' in Fuzz/FuzzAppleSigned.swift) verify under
/// the fuzz root at the harness's fixed time, so the fuzzer starts past the signature and mutates certificates,
/// headers and payloads that are otherwise believed.
@Suite("The JWS fuzz seeds verify under the fuzz root")
struct FuzzSeedTests {
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let now = Date(timeIntervalSince1970: 1_780_282_800)

    /// The root embedded in the fuzz harness (the PEM between its BEGIN and END lines).
    static func fuzzRoot() throws -> Certificate {
        let source = try String(contentsOf: packageRoot.appendingPathComponent("Fuzz/FuzzAppleSigned.swift"), encoding: .utf8)
        let lines = source.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        let begin = try #require(lines.firstIndex(of: "-----BEGIN CERTIFICATE-----"))
        let end = try #require(lines.firstIndex(of: "-----END CERTIFICATE-----"))
        // Loaded the way APP_STORE_ROOT_CERTIFICATES is.
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("fuzz-root-\(UUID().uuidString).pem")
        defer { try? FileManager.default.removeItem(at: file) }
        try Data((lines[begin...end].joined(separator: "\n") + "\n").utf8).write(to: file)
        return try #require(try AppStoreConfiguration.rootCertificates(fromPaths: [file.path]).first)
    }

    static func seed(_ name: String) throws -> Data {
        try Data(contentsOf: packageRoot.appendingPathComponent("Fuzz/corpus/" + name))
    }

    @Test("the compact seeds ('K') verify as a transaction, a Non-Consumable, renewal info and a notification")
    func compactSeeds() async throws {
        let verifier = JWSVerifier(rootCertificates: [try Self.fuzzRoot()], bundleID: "com.example.fuzz")
        func text(_ name: String) throws -> String {
            let data = try Self.seed(name)
            #expect(data.first == UInt8(ascii: "K"))
            return String(decoding: data.dropFirst(), as: UTF8.self)
        }
        let transaction = try await verifier.verifyTransaction(try text("jws-compact-transaction"), environment: .production, now: Self.now)
        #expect(transaction.productId == "pro.monthly")
        let lifetime = try await verifier.verifyTransaction(try text("jws-compact-nonconsumable"), environment: .production, now: Self.now)
        let fact = try AppleSubscriptionMapping.purchaseFact(status: nil, transaction: lifetime, renewal: nil)
        #expect(fact.kind == .nonExpiring && fact.expiresDate == nil)
        let renewal = try await verifier.verifyRenewalInfo(try text("jws-compact-renewal"), environment: .production, now: Self.now)
        #expect(renewal.autoRenewStatus == 1)
        let notification = try await verifier.verify(try text("jws-compact-notification"), as: NotificationPayload.self, now: Self.now)
        #expect(notification.notificationType == "REFUND")
        let inner = try #require(notification.data?.signedTransactionInfo)
        #expect(try await verifier.verifyTransaction(inner, environment: .production, now: Self.now).transactionId == "2000000002")
        // One byte of the signature changed: not believed.
        var forged = Array(try text("jws-compact-transaction").utf8)
        forged[forged.count - 5] = forged[forged.count - 5] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        await #expect(throws: JWSVerificationError.self) {
            try await verifier.verifyTransaction(String(decoding: forged, as: UTF8.self), environment: .production, now: Self.now)
        }
    }

    @Test("a parts seed ('J': header, payload, raw signature) is the same JWS once each part is base64url-encoded")
    func partsSeed() async throws {
        let verifier = JWSVerifier(rootCertificates: [try Self.fuzzRoot()], bundleID: "com.example.fuzz")
        let data = try Self.seed("jws-transaction")
        #expect(data.first == UInt8(ascii: "J"))
        let parts = data.dropFirst().split(separator: UInt8(ascii: "\n"), maxSplits: 2, omittingEmptySubsequences: false)
        #expect(parts.count == 3)
        let jws = parts.map { Base64URL.encode(Data($0)) }.joined(separator: ".")
        #expect(try await verifier.verifyTransaction(jws, environment: .production, now: Self.now).productId == "pro.monthly")
    }
}
