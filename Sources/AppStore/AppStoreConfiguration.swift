import Foundation
import SourceHTTP
import SubreconCore
import SwiftASN1
import X509

/// Everything the App Store Server API client needs: credentials, environment, endpoints, trust and retry settings.
///
/// Built once (by the executable, from the environment) and passed by value. `description` never shows the key.
public struct AppStoreConfiguration: Sendable, CustomStringConvertible {
    /// Issuer ID from App Store Connect (Users and Access → Integrations → In-App Purchase).
    public var issuerID: String
    /// Key ID of the In-App Purchase key.
    public var keyID: String
    /// The In-App Purchase key (.p8, PKCS#8 PEM). Secret: never logged or described.
    public var privateKeyPEM: String
    /// The app's bundle id, sent as `bid` and checked in every signed transaction.
    public var bundleID: String
    /// `production` asks production first and falls back to sandbox on 4040010; `sandbox` asks sandbox only.
    public var environment: StoreEnvironment
    /// Overrides the base URL of both environments (tests, proxies). nil = Apple's hosts.
    public var baseURLOverride: String?
    /// Overrides the sandbox base URL only (takes precedence over `baseURLOverride` for sandbox).
    public var sandboxBaseURLOverride: String?
    /// Roots trusted for JWS `x5c` chains. Default: the bundled Apple Root CA - G3.
    public var rootCertificates: [Certificate]
    /// Deadline, body limit, attempts per environment for retryable failures (5xx, network, retryable error codes)
    /// and their backoff, and the bounds of 429 waits (a longer `Retry-After` than `maxRateLimitWait` gives the user
    /// up for this run, never a sleep that long).
    public var requestPolicy: SourceRequestPolicy
    /// Largest response body accepted by default: a page of signed transactions or notifications.
    public static let defaultMaxBodyBytes = 1 << 20

    /// Apple's production host.
    public static let productionURL = "https://api.storekit.itunes.apple.com"
    /// Apple's sandbox host.
    public static let sandboxURL = "https://api.storekit-sandbox.itunes.apple.com"

    public init(
        issuerID: String, keyID: String, privateKeyPEM: String, bundleID: String,
        environment: StoreEnvironment = .production, baseURLOverride: String? = nil,
        sandboxBaseURLOverride: String? = nil, rootCertificates: [Certificate]? = nil,
        requestPolicy: SourceRequestPolicy = SourceRequestPolicy(maxBodyBytes: AppStoreConfiguration.defaultMaxBodyBytes)
    ) throws(AppStoreConfigurationError) {
        self.issuerID = issuerID
        self.keyID = keyID
        self.privateKeyPEM = privateKeyPEM
        self.bundleID = bundleID
        self.environment = environment
        self.baseURLOverride = baseURLOverride
        self.sandboxBaseURLOverride = sandboxBaseURLOverride
        if let rootCertificates {
            self.rootCertificates = rootCertificates
        } else {
            self.rootCertificates = [try Self.appleRootCAG3()]
        }
        self.requestPolicy = requestPolicy
    }

    /// The base URL (no trailing slash) used for `environment`.
    public func baseURL(for environment: StoreEnvironment) -> String {
        let url: String =
            switch environment {
            case .production: baseURLOverride ?? Self.productionURL
            case .sandbox: sandboxBaseURLOverride ?? baseURLOverride ?? Self.sandboxURL
            }
        return url.hasSuffix("/") ? String(url.dropLast()) : url
    }

    public var description: String {
        "AppStoreConfiguration(issuerID: \(issuerID), keyID: \(keyID), privateKey: <redacted>, bundleID: \(bundleID), "
            + "environment: \(environment.rawValue), production: \(baseURL(for: .production)), "
            + "sandbox: \(baseURL(for: .sandbox)), roots: \(rootCertificates.count))"
    }

    /// Apple Root CA - G3, shipped inside the binary.
    public static func appleRootCAG3() throws(AppStoreConfigurationError) -> Certificate {
        guard let url = Bundle.module.url(forResource: "AppleRootCA-G3", withExtension: "pem"),
            let pem = try? String(contentsOf: url, encoding: .utf8),
            let certificate = try? Certificate(pemEncoded: pem)
        else {
            throw .invalidRootCertificate(path: "<bundled AppleRootCA-G3.pem>")
        }
        return certificate
    }

    /// Loads root certificates from PEM (one or more blocks) or DER files (`APP_STORE_ROOT_CERTIFICATES`).
    public static func rootCertificates(fromPaths paths: [String]) throws(AppStoreConfigurationError) -> [Certificate] {
        var certificates: [Certificate] = []
        for path in paths where !path.isEmpty {
            guard let data = FileManager.default.contents(atPath: path) else { throw .unreadableFile(path: path) }
            let parsed = parseCertificates(data)
            guard !parsed.isEmpty else { throw .invalidRootCertificate(path: path) }
            certificates.append(contentsOf: parsed)
        }
        return certificates
    }

    private static func parseCertificates(_ data: Data) -> [Certificate] {
        if let text = String(data: data, encoding: .utf8), text.contains("-----BEGIN CERTIFICATE-----") {
            guard let documents = try? PEMDocument.parseMultiple(pemString: text) else { return [] }
            return documents.compactMap { try? Certificate(pemDocument: $0) }
        }
        guard let certificate = try? Certificate(derEncoded: Array(data)) else { return [] }
        return [certificate]
    }
}

/// A configuration problem, reported before anything is touched.
public enum AppStoreConfigurationError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The private key is not a P-256 PKCS#8 PEM key. The key itself is never shown.
    case invalidPrivateKey
    case unreadableFile(path: String)
    case invalidRootCertificate(path: String)

    public var description: String {
        switch self {
        case .invalidPrivateKey: "APP_STORE_PRIVATE_KEY is not a P-256 private key in PEM (.p8) form"
        case .unreadableFile(let path): "cannot read certificate file \(path)"
        case .invalidRootCertificate(let path): "no PEM or DER certificate found in \(path)"
        }
    }
}
