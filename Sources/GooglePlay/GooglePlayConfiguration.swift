import Foundation
import SourceHTTP
import SubreconCore
import _CryptoExtras

/// Why a service account key or the Google Play settings cannot be used. Never contains the key.
public enum GooglePlayConfigurationError: Error, Sendable, Hashable, CustomStringConvertible {
    case notJSON
    case missingField(String)
    case wrongType(String)
    case invalidTokenURI
    case invalidPrivateKey
    case invalidPackageName

    public var description: String {
        switch self {
        case .notJSON: "the service account key is not a JSON object"
        case .missingField(let field): "the service account key has no \(field)"
        case .wrongType(let type): "the service account key's type is \(type), not service_account"
        case .invalidTokenURI: "the service account key's token_uri is not an http(s) URL"
        case .invalidPrivateKey:
            "the service account key's private_key is not an RSA private key in PEM (PKCS#8) form of at least 2048 bits"
        case .invalidPackageName: "the package name is empty or contains a character other than letters, digits, '.' and '_'"
        }
    }
}

/// The fields of a Google service account JSON key subrecon uses. `description` never shows the key.
public struct GoogleServiceAccount: Sendable, CustomStringConvertible {
    public var clientEmail: String
    /// PEM, PKCS#8 RSA. Secret: never logged or described.
    public var privateKeyPEM: String
    /// The key's id, sent as the JWT's `kid`; nil when the key file does not name one.
    public var privateKeyID: String?
    /// Where the signed JWT is exchanged for an access token (`https://oauth2.googleapis.com/token`).
    public var tokenURI: String

    /// Parses and checks a JSON key (`type` `service_account`, `client_email`, `private_key`, `token_uri`, optional
    /// `private_key_id`); the private key must load as RSA.
    public init(json: String) throws(GooglePlayConfigurationError) {
        guard let object = (try? JSONSerialization.jsonObject(with: Data(json.utf8))) as? [String: Any] else {
            throw .notJSON
        }
        func field(_ name: String) throws(GooglePlayConfigurationError) -> String {
            guard let value = object[name] as? String, !value.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
                throw .missingField(name)
            }
            return value
        }
        let type = try field("type")
        guard type == "service_account" else { throw .wrongType(String(type.prefix(40))) }
        clientEmail = try field("client_email")
        privateKeyPEM = try field("private_key")
        tokenURI = try field("token_uri")
        privateKeyID = (object["private_key_id"] as? String).flatMap { $0.isEmpty ? nil : $0 }
        guard let url = URL(string: tokenURI), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
            url.host != nil
        else { throw .invalidTokenURI }
        guard (try? _RSA.Signing.PrivateKey(pemRepresentation: privateKeyPEM)) != nil else { throw .invalidPrivateKey }
    }

    public init(clientEmail: String, privateKeyPEM: String, privateKeyID: String?, tokenURI: String) {
        self.clientEmail = clientEmail
        self.privateKeyPEM = privateKeyPEM
        self.privateKeyID = privateKeyID
        self.tokenURI = tokenURI
    }

    public var description: String {
        "GoogleServiceAccount(clientEmail: \(clientEmail), privateKeyID: \(privateKeyID ?? "none"), privateKey: <redacted>, tokenURI: \(tokenURI))"
    }
}

/// Everything the Google Play Developer API client needs. Built once from the environment and passed by value.
public struct GooglePlayConfiguration: Sendable, CustomStringConvertible {
    public static let defaultBaseURL = "https://androidpublisher.googleapis.com"
    public static let scope = "https://www.googleapis.com/auth/androidpublisher"

    public var serviceAccount: GoogleServiceAccount
    /// The Android package name (`applicationId`).
    public var packageName: String
    /// Base URL of the Android Publisher API, no trailing slash.
    public var baseURL: String
    /// Deadline, body limit, attempts and backoff for transient failures, and the bounds of 429 waits (a longer
    /// `Retry-After` than `maxRateLimitWait` gives the user up for this run). The token endpoint uses it too.
    public var requestPolicy: SourceRequestPolicy
    /// Largest response body accepted by default: a subscription or a page of voided purchases.
    public static let defaultMaxBodyBytes = 1 << 20

    public init(
        serviceAccount: GoogleServiceAccount, packageName: String, baseURL: String = Self.defaultBaseURL,
        requestPolicy: SourceRequestPolicy = SourceRequestPolicy(maxBodyBytes: GooglePlayConfiguration.defaultMaxBodyBytes)
    ) throws(GooglePlayConfigurationError) {
        guard !packageName.isEmpty,
            packageName.unicodeScalars.allSatisfy({ $0.isASCII && (CharacterSet.alphanumerics.contains($0) || $0 == "." || $0 == "_") })
        else { throw .invalidPackageName }
        self.serviceAccount = serviceAccount
        self.packageName = packageName
        self.baseURL = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
        self.requestPolicy = requestPolicy
    }

    /// Parses the JSON key text, then as the memberwise initializer.
    public init(serviceAccountJSON: String, packageName: String, baseURL: String = Self.defaultBaseURL) throws(GooglePlayConfigurationError)
    {
        try self.init(serviceAccount: try GoogleServiceAccount(json: serviceAccountJSON), packageName: packageName, baseURL: baseURL)
    }

    public var description: String {
        "GooglePlayConfiguration(packageName: \(packageName), baseURL: \(baseURL), serviceAccount: \(serviceAccount))"
    }
}
