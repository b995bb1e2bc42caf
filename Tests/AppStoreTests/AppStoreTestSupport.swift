import Crypto
import Foundation
import SourceHTTP
import X509

@testable import AppStore

/// Apple's published test vectors, kept in the repository next to this file (`Vectors/`, see its README for
/// where each file comes from). A missing file throws `VectorMissing`: the test fails, it is never skipped.
enum Vectors {
    static let root: String = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Vectors").standardizedFileURL.path
    /// The package root (three levels above this file), to check that the vectors live inside it.
    static let packageRoot: String = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().standardizedFileURL.path
    static let swiftResources = root + "/swift"
    static let javaCerts = root + "/java/certs"
    static let appleRootPEM = root + "/apple-root/AppleRootCA-G3.pem"

    static func data(_ path: String) throws -> Data {
        guard let data = FileManager.default.contents(atPath: path) else { throw VectorMissing(path: path) }
        return data
    }
    static func text(_ path: String) throws -> String {
        String(decoding: try data(path), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }
    static func signedData(_ name: String) throws -> String { try text(swiftResources + "/mock_signed_data/" + name) }
    static func model(_ name: String) throws -> Data { try data(swiftResources + "/models/" + name) }
    static func javaCertificate(_ name: String) throws -> Certificate { try certificate(javaCerts + "/" + name) }
    static func testCA() throws -> Certificate { try certificate(swiftResources + "/certs/testCA.der") }
    /// Parsed through the production loader (PEM or DER), which is exercised this way too.
    static func certificate(_ path: String) throws -> Certificate {
        let certificates = try AppStoreConfiguration.rootCertificates(fromPaths: [path])
        guard certificates.count == 1 else { throw VectorMissing(path: path) }
        return certificates[0]
    }
    static func leafKey() throws -> P256.Signing.PrivateKey {
        try P256.Signing.PrivateKey(pemRepresentation: try text(javaCerts + "/testLeaf.key"))
    }

    struct VectorMissing: Error { var path: String }
}

extension Date {
    /// 2025-11-01, the validation time of Apple's own tests.
    static let vectorValidationTime = Date(timeIntervalSince1970: 1_761_962_975)
    /// 2042, after every test certificate expired.
    static let afterTestChainExpiry = Date(timeIntervalSince1970: 2_280_946_846)
}

/// Records requested waits instead of sleeping.
final class RecordingSleeper: @unchecked Sendable {
    private let lock = NSLock()
    private var _waits: [Duration] = []
    var waits: [Duration] { lock.withLock { _waits } }
    func sleep(_ duration: Duration) async throws { lock.withLock { _waits.append(duration) } }
}
