import Foundation
import GooglePlay
import StoreSimulator
import Testing

@Suite("Google Play service account key")
struct GooglePlayConfigurationTests {
    static func keyJSON(_ change: (inout [String: Any]) -> Void) -> KeyText {
        KeyText(json: changedKey(change))
    }

    static func changedKey(_ change: (inout [String: Any]) -> Void) -> String {
        var object = (try? JSONSerialization.jsonObject(with: Data(TestKeys.account.json.utf8))) as? [String: Any] ?? [:]
        change(&object)
        return String(decoding: (try? JSONSerialization.data(withJSONObject: object)) ?? Data(), as: UTF8.self)
    }

    @Test("a key as Google's console downloads it is read: email, key id, token_uri")
    func readsKey() throws {
        let account = try GoogleServiceAccount(json: TestKeys.account.json)
        #expect(account.clientEmail == TestKeys.account.clientEmail)
        #expect(account.privateKeyID == TestKeys.account.keyID)
        #expect(account.tokenURI == "https://oauth2.googleapis.com/token")
        let configuration = try GooglePlayConfiguration(serviceAccountJSON: TestKeys.account.json, packageName: "com.example.app")
        #expect(configuration.baseURL == "https://androidpublisher.googleapis.com")
    }

    @Test("description never shows the private key")
    func descriptionHidesKey() throws {
        let configuration = try GooglePlayConfiguration(serviceAccountJSON: TestKeys.account.json, packageName: "com.example.app")
        let text = "\(configuration) \(configuration.serviceAccount) \(try GoogleJWTSigner(serviceAccount: configuration.serviceAccount))"
        #expect(!text.contains("PRIVATE KEY"))
        let body = TestKeys.account.privateKeyPEM.split(separator: "\n")[1]
        #expect(!text.contains(body))
        #expect(text.contains("<redacted>"))
    }

    /// A key text shown in test names by what was done to it, not by its (long) content.
    struct KeyText: Sendable, CustomTestStringConvertible {
        var json: String
        var testDescription: String { json.count > 40 ? "a key (\(json.count) characters)" : json }
    }

    static let malformed: [(KeyText, GooglePlayConfigurationError)] = [
        (KeyText(json: "not json at all"), GooglePlayConfigurationError.notJSON),
        (KeyText(json: "[1, 2]"), .notJSON),
        (keyJSON { $0["client_email"] = nil }, .missingField("client_email")),
        (keyJSON { $0["private_key"] = nil }, .missingField("private_key")),
        (keyJSON { $0["token_uri"] = nil }, .missingField("token_uri")),
        (keyJSON { $0["type"] = nil }, .missingField("type")),
        (keyJSON { $0["client_email"] = 42 }, .missingField("client_email")),
        (keyJSON { $0["type"] = "authorized_user" }, .wrongType("authorized_user")),
        (keyJSON { $0["token_uri"] = "not a url" }, .invalidTokenURI),
        (keyJSON { $0["token_uri"] = "ftp://example.com/token" }, .invalidTokenURI),
        (keyJSON { $0["private_key"] = "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n" }, .invalidPrivateKey),
        (
            keyJSON {
                $0["private_key"] =
                    "-----BEGIN PRIVATE KEY-----\nMIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgevZzL1gdAFr88hb2\nOF/2NxApJCzGCEDdfSp6VQO30hyhRANCAAQRWz+jn65BtOMvdyHKcvjBeBSDZH2r\n1RTwjmYSi9R/zpBnuQ4EiMnCqfMPWiZqB4QdbAd0E7oH50VpuZ1P087G\n-----END PRIVATE KEY-----\n"
            }, .invalidPrivateKey
        ),
    ]

    @Test("a malformed key is an error naming what is wrong, never echoing the key", arguments: malformed)
    func malformedKeys(key: KeyText, expected: GooglePlayConfigurationError) {
        #expect(throws: expected) { try GoogleServiceAccount(json: key.json) }
        let description = expected.description
        #expect(!description.contains("BEGIN"))
        #expect(!description.contains(TestKeys.account.clientEmail))
    }

    @Test("an unusable package name is refused")
    func packageName() throws {
        let account = try GoogleServiceAccount(json: TestKeys.account.json)
        #expect(throws: GooglePlayConfigurationError.invalidPackageName) {
            try GooglePlayConfiguration(serviceAccount: account, packageName: "")
        }
        #expect(throws: GooglePlayConfigurationError.invalidPackageName) {
            try GooglePlayConfiguration(serviceAccount: account, packageName: "com.example/../x")
        }
    }
}
