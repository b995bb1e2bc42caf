import Crypto
import Foundation
import StoreSimulator
import SubreconCore
import Testing
import X509

@testable import AppStore

@Suite("App Store configuration, JWT and wire models")
struct ConfigurationTests {
    @Test("the bundled root is Apple Root CA - G3 with the published SHA-256 fingerprint")
    func bundledRoot() throws {
        let root = try AppStoreConfiguration.appleRootCAG3()
        let fingerprint = SHA256.hash(data: try AppleTestPKIDER.der(root)).map { String(format: "%02X", $0) }.joined(separator: ":")
        #expect(fingerprint == "63:34:3A:BF:B8:9A:6A:03:EB:B5:7E:9B:3F:5F:A7:BE:7C:4F:5C:75:6F:30:17:B3:A8:C4:88:C3:65:3E:91:79")
        #expect(root.subject.description.contains("Apple Root CA - G3"))
    }

    @Test("base URLs: Apple's hosts by default, an override serves both, a sandbox override wins for sandbox")
    func baseURLs() throws {
        let key = P256.Signing.PrivateKey().pemRepresentation
        var configuration = try AppStoreConfiguration(issuerID: "i", keyID: "k", privateKeyPEM: key, bundleID: "b")
        #expect(configuration.baseURL(for: .production) == "https://api.storekit.itunes.apple.com")
        #expect(configuration.baseURL(for: .sandbox) == "https://api.storekit-sandbox.itunes.apple.com")
        configuration.baseURLOverride = "http://127.0.0.1:9/"
        #expect(configuration.baseURL(for: .production) == "http://127.0.0.1:9")
        #expect(configuration.baseURL(for: .sandbox) == "http://127.0.0.1:9")
        configuration.sandboxBaseURLOverride = "http://127.0.0.1:9/sandbox"
        #expect(configuration.baseURL(for: .sandbox) == "http://127.0.0.1:9/sandbox")
    }

    @Test("the private key never appears in descriptions or configuration errors")
    func redaction() throws {
        let key = P256.Signing.PrivateKey().pemRepresentation
        let configuration = try AppStoreConfiguration(issuerID: "issuer", keyID: "KEY123", privateKeyPEM: key, bundleID: "com.example")
        let body = key.split(separator: "\n")[1]
        #expect(!configuration.description.contains(body))
        #expect(configuration.description.contains("<redacted>"))
        #expect(!String(describing: try AppStoreJWTSigner(configuration: configuration)).contains(body))
        let error = #expect(throws: AppStoreConfigurationError.self) {
            try AppStoreJWTSigner(
                issuerID: "i", keyID: "k", bundleID: "b",
                privateKeyPEM: "-----BEGIN PRIVATE KEY-----\nsecretstuff\n-----END PRIVATE KEY-----")
        }
        #expect(error == .invalidPrivateKey)
        #expect(!(error?.description.contains("secretstuff") ?? true))
    }

    @Test("root certificates load from PEM and DER files; an unreadable path is named")
    func rootLoading() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("appstore-roots-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let root = try AppStoreConfiguration.appleRootCAG3()
        let der = directory.appendingPathComponent("root.der")
        let pem = directory.appendingPathComponent("root.pem")
        try Data(try AppleTestPKIDER.der(root)).write(to: der)
        try AppleTestPKIDER.pem(root).write(to: pem, atomically: true, encoding: .utf8)
        let loaded = try AppStoreConfiguration.rootCertificates(fromPaths: [der.path, pem.path])
        #expect(loaded == [root, root])
        #expect(throws: AppStoreConfigurationError.unreadableFile(path: "/nonexistent/root.pem")) {
            try AppStoreConfiguration.rootCertificates(fromPaths: ["/nonexistent/root.pem"])
        }
        let garbage = directory.appendingPathComponent("garbage.pem")
        try Data("not a certificate".utf8).write(to: garbage)
        #expect(throws: AppStoreConfigurationError.invalidRootCertificate(path: garbage.path)) {
            try AppStoreConfiguration.rootCertificates(fromPaths: [garbage.path])
        }
    }
}

/// DER / PEM of a certificate through the simulator's serializer (this target does not import SwiftASN1).
enum AppleTestPKIDER {
    static func der(_ certificate: Certificate) throws -> [UInt8] { try wrap(certificate).rootDER() }
    static func pem(_ certificate: Certificate) throws -> String { try wrap(certificate).rootPEM() }
    private static func wrap(_ certificate: Certificate) -> AppleTestPKI {
        AppleTestPKI(root: certificate, intermediate: certificate, leaf: certificate, leafKey: P256.Signing.PrivateKey())
    }
}
