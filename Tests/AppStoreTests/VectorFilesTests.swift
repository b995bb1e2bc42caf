import Foundation
import Testing

@testable import AppStore

/// The test vectors are part of the repository: a clone alone runs every App Store test, none is skipped.
@Suite("Apple test vectors ship with the repository")
struct VectorFilesTests {
    /// Every file the App Store tests read, relative to `Tests/AppStoreTests/Vectors`.
    static let files = [
        "LICENSE.txt", "README.md", "apple-root/AppleRootCA-G3.pem",
        "swift/certs/testCA.der", "swift/certs/testSigningKey.p8",
        "swift/mock_signed_data/transactionInfo", "swift/mock_signed_data/renewalInfo",
        "swift/mock_signed_data/wrongBundleId", "swift/mock_signed_data/missingX5CHeaderClaim",
        "swift/models/apiException.json", "swift/models/apiTooManyRequestsException.json",
        "swift/models/apiUnknownError.json", "swift/models/transactionIdNotFoundError.json",
        "swift/models/getAllSubscriptionStatusesResponse.json", "swift/models/signedTransaction.json",
        "swift/models/signedRenewalInfo.json",
        "java/certs/testCA.pem", "java/certs/testIntermediate.pem", "java/certs/testLeaf.pem", "java/certs/testLeaf.key",
        "java/certs/testInvalidOIDIntermediate.pem", "java/certs/testInvalidIntermediateLeaf.pem",
        "java/certs/testInvalidOIDLeaf.pem",
    ]

    @Test("the vectors live inside the package, every file the tests read is present and non-empty")
    func vectorsAreInThePackage() throws {
        #expect(Vectors.root.hasPrefix(Vectors.packageRoot + "/Tests/"), "vectors outside the repository: \(Vectors.root)")
        for file in Self.files {
            let data = try Vectors.data(Vectors.root + "/" + file)
            #expect(!data.isEmpty, "\(file) is empty")
        }
    }

    @Test("the README names the upstream source of every vector file and the licence travels with them")
    func provenanceIsWritten() throws {
        let readme = try Vectors.text(Vectors.root + "/README.md")
        for file in Self.files where file != "README.md" && file != "LICENSE.txt" {
            let name = (file as NSString).lastPathComponent
            #expect(readme.contains(name), "README.md does not say where \(name) comes from")
        }
        #expect(readme.contains("apple/app-store-server-library-swift") && readme.contains("apple/app-store-server-library-java"))
        let license = try Vectors.text(Vectors.root + "/LICENSE.txt")
        #expect(license.hasPrefix("Copyright 2023 Apple Inc.") && license.contains("Permission is hereby granted"))
    }

    @Test("the root shipped in the binary is byte for byte Apple's published AppleRootCA-G3.pem")
    func bundledRootIsThePublishedOne() throws {
        let published = try Vectors.certificate(Vectors.appleRootPEM)
        let bundled = try AppStoreConfiguration.appleRootCAG3()
        #expect(try AppleTestPKIDER.der(bundled) == AppleTestPKIDER.der(published))
        #expect(bundled == published)
    }
}
