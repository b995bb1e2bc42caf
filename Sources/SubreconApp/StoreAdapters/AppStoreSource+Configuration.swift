import AppStore
import Crypto
import Foundation
import SourceHTTP
import SubreconCore
import SubreconJob
import X509

/// What the App Store's variables configure: the App Store Server API, the legacy `verifyReceipt` bridge, or both.
struct AppleConfiguration: Sendable, CustomStringConvertible {
    var appStore: AppStoreConfiguration?
    /// The legacy `verifyReceipt` bridge; nil unless `APPLE_SHARED_SECRET` is set.
    var receipts: ReceiptVerifierConfiguration?

    var description: String {
        "appStore: \(appStore.map(String.init(describing:)) ?? "not configured"), "
            + "receipts: \(receipts.map(String.init(describing:)) ?? "not configured")"
    }
}

extension AppStoreSource {
    static var origin: FactOrigin { .appStore }
    static var rateOption: String { "app-store" }
    /// Apple's per-app budget: 50 requests/s in production, a tenth of it in sandbox.
    static func defaultRequestsPerSecond(_ environment: StoreEnvironment) -> Double { environment == .sandbox ? 5 : 50 }
    static var variables: String {
        "APP_STORE_ISSUER_ID + APP_STORE_KEY_ID + APP_STORE_PRIVATE_KEY + APP_STORE_BUNDLE_ID; APPLE_SHARED_SECRET + APP_STORE_BUNDLE_ID"
    }

    /// `APP_STORE_*` (the App Store Server API) and `APPLE_SHARED_SECRET` (+ `APP_STORE_BUNDLE_ID`,
    /// `APPLE_VERIFY_RECEIPT_URL`: the receipt bridge); nil when neither is configured.
    static func load(
        _ env: ProcessEnvironment, policy: SourceRequestPolicy, environment: StoreEnvironment
    ) throws(ConfigError) -> AppleConfiguration? {
        let apple = try serverAPIConfiguration(
            env, environment: environment, policy: policy.limitingBodies(to: AppStoreConfiguration.defaultMaxBodyBytes))
        var receipts: ReceiptVerifierConfiguration?
        let receiptURL = try env.baseURL("APPLE_VERIFY_RECEIPT_URL", default: nil)
        if let secret = try env.secret("APPLE_SHARED_SECRET") {
            guard let bundle = env.string("APP_STORE_BUNDLE_ID") else {
                throw ConfigError(
                    "APP_STORE_BUNDLE_ID", "is not set (APPLE_SHARED_SECRET is: a receipt is believed only for the app's own bundle id)")
            }
            receipts = ReceiptVerifierConfiguration(
                sharedSecret: secret, bundleID: bundle, urlOverride: receiptURL,
                requestPolicy: policy.limitingBodies(to: ReceiptVerifierConfiguration.defaultMaxBodyBytes))
        } else if receiptURL != nil {
            throw ConfigError("APPLE_SHARED_SECRET", "is not set (APPLE_VERIFY_RECEIPT_URL is; or APPLE_SHARED_SECRET_FILE)")
        }
        guard apple != nil || receipts != nil else { return nil }
        return AppleConfiguration(appStore: apple, receipts: receipts)
    }

    static func serverAPIConfiguration(
        _ env: ProcessEnvironment, environment: StoreEnvironment, policy: SourceRequestPolicy
    ) throws(ConfigError) -> AppStoreConfiguration? {
        let issuer = env.string("APP_STORE_ISSUER_ID")
        let keyID = env.string("APP_STORE_KEY_ID")
        let key = try env.secret("APP_STORE_PRIVATE_KEY")
        let bundle = env.string("APP_STORE_BUNDLE_ID")
        // The bundle id alone serves the receipt bridge; the App Store Server API needs the key too.
        if issuer == nil && keyID == nil && key == nil
            && (bundle == nil || env.string("APPLE_SHARED_SECRET") != nil || env.string("APPLE_SHARED_SECRET_FILE") != nil)
        {
            return nil
        }
        guard let issuer else { throw ConfigError("APP_STORE_ISSUER_ID", "is not set (the other App Store variables are)") }
        guard let keyID else { throw ConfigError("APP_STORE_KEY_ID", "is not set (the other App Store variables are)") }
        guard let key else { throw ConfigError("APP_STORE_PRIVATE_KEY", "is not set (the other App Store variables are)") }
        guard let bundle else { throw ConfigError("APP_STORE_BUNDLE_ID", "is not set (the other App Store variables are)") }
        guard (try? P256.Signing.PrivateKey(pemRepresentation: key)) != nil else {
            throw ConfigError("APP_STORE_PRIVATE_KEY", "is not an ES256 (P-256) private key in PEM (.p8) form")
        }
        let roots: [Certificate]
        if let paths = env.string("APP_STORE_ROOT_CERTIFICATES") {
            do {
                roots = try AppStoreConfiguration.rootCertificates(fromPaths: paths.split(separator: ":").map(String.init))
            } catch {
                throw ConfigError("APP_STORE_ROOT_CERTIFICATES", "\(error)")
            }
        } else {
            do {
                roots = [try AppStoreConfiguration.appleRootCAG3()]
            } catch {
                throw ConfigError("APP_STORE_ROOT_CERTIFICATES", "default Apple Root CA - G3 could not be loaded: \(error)")
            }
        }
        let base = try env.baseURL("APP_STORE_BASE_URL", default: nil)
        do {
            return try AppStoreConfiguration(
                issuerID: issuer, keyID: keyID, privateKeyPEM: key, bundleID: bundle, environment: environment,
                baseURLOverride: base, rootCertificates: roots, requestPolicy: policy)
        } catch {
            throw ConfigError("APP_STORE_PRIVATE_KEY", "is not usable: \(error)")
        }
    }
}
