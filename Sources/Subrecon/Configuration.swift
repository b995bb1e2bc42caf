import AppStore
import Crypto
import Foundation
import GooglePlay
import RevenueCat
import SourceHTTP
import Stripe
import SubreconCore
import SubreconDatabase
import X509

/// Everything `subrecon` reads from the environment (SPEC 3), validated once, before anything is touched.
/// `description` never shows a secret.
public struct SubreconConfiguration: Sendable, CustomStringConvertible {
    public var database: DatabaseSettings
    public var revenueCat: RevenueCatConfiguration?
    public var appStore: AppStoreConfiguration?
    /// The legacy `verifyReceipt` bridge; nil unless `APPLE_SHARED_SECRET` is set.
    public var receipts: ReceiptVerifierConfiguration?
    /// `production` unless `APP_STORE_ENVIRONMENT=sandbox`.
    public var environment: StoreEnvironment
    /// Google Play Developer API; nil unless `GOOGLE_PLAY_SERVICE_ACCOUNT` and `GOOGLE_PLAY_PACKAGE_NAME` are set.
    public var googlePlay: GooglePlayConfiguration? = nil
    /// Stripe; nil unless `STRIPE_API_KEY` is set.
    public var stripe: StripeConfiguration? = nil

    public var description: String {
        let revenueCatText = revenueCat.map { String(describing: $0) } ?? "none"
        return "SubreconConfiguration(database: \(database), revenueCat: \(revenueCatText), "
            + "appStore: \(appStore.map(String.init(describing:)) ?? "not configured"), "
            + "receipts: \(receipts.map(String.init(describing:)) ?? "not configured"), environment: \(environment.rawValue), "
            + "googlePlay: \(googlePlay.map(String.init(describing:)) ?? "not configured"), "
            + "stripe: \(stripe.map(String.init(describing:)) ?? "not configured"))"
    }

    /// True when at least one source is configured (SPEC 3: `run` needs one).
    public var hasSource: Bool {
        revenueCat != nil || appStore != nil || receipts != nil || googlePlay != nil || stripe != nil
    }

    /// Reads and validates the configuration. `requireSource` is true for `run` and `explain`: at least one source
    /// must be configured (else 78 naming the variables); every source is optional on its own.
    public static func load(_ env: ProcessEnvironment, requireSource: Bool) throws(ConfigError) -> SubreconConfiguration {
        let database = try databaseSettings(env)
        let environment: StoreEnvironment
        switch env.string("APP_STORE_ENVIRONMENT")?.lowercased() {
        case nil, "production": environment = .production
        case "sandbox": environment = .sandbox
        default: throw ConfigError("APP_STORE_ENVIRONMENT", "must be production or sandbox")
        }
        let policy = try requestPolicy(env)
        var revenueCat: RevenueCatConfiguration?
        if let key = try env.secret("REVENUECAT_API_KEY") {
            let base = try env.baseURL("REVENUECAT_BASE_URL", default: RevenueCatConfiguration.defaultBaseURL)!
            revenueCat = RevenueCatConfiguration(
                baseURL: base, apiKey: key, requestPolicy: policy.limitingBodies(to: RevenueCatConfiguration.defaultMaxBodyBytes))
        }
        let apple = try appStoreConfiguration(
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
        var configuration = SubreconConfiguration(
            database: database, revenueCat: revenueCat, appStore: apple, receipts: receipts, environment: environment)
        configuration.googlePlay = try googlePlayConfiguration(
            env, policy: policy.limitingBodies(to: GooglePlayConfiguration.defaultMaxBodyBytes))
        configuration.stripe = try stripeConfiguration(env, policy: policy)
        if requireSource && !configuration.hasSource { throw ConfigError.noSource }
        return configuration
    }

    /// How hard every source tries (`SUBRECON_HTTP_*`): one policy for all of them; each source sets its own body
    /// limit.
    static func requestPolicy(_ env: ProcessEnvironment) throws(ConfigError) -> SourceRequestPolicy {
        func duration(_ seconds: Double) -> Duration { .milliseconds(Int64(seconds * 1000)) }
        // 429: the longest single wait a source may ask for, and the total a lookup may spend waiting on 429s.
        return SourceRequestPolicy(
            requestTimeout: duration(try env.number("SUBRECON_HTTP_TIMEOUT_SECONDS", default: 10, range: 0.01...600)),
            maxAttempts: Int(try env.number("SUBRECON_HTTP_MAX_ATTEMPTS", default: 4, range: 1...20)),
            baseBackoff: duration(try env.number("SUBRECON_HTTP_BACKOFF_SECONDS", default: 0.5, range: 0...60)),
            maxRateLimitWait: duration(try env.number("SUBRECON_HTTP_MAX_429_WAIT_SECONDS", default: 60, range: 0...3600)),
            rateLimitBudget: duration(try env.number("SUBRECON_HTTP_429_BUDGET_SECONDS", default: 300, range: 0...86_400)))
    }

    /// `GOOGLE_PLAY_SERVICE_ACCOUNT` (JSON key text, or `_FILE`) + `GOOGLE_PLAY_PACKAGE_NAME` (+ optional
    /// `GOOGLE_PLAY_BASE_URL`); nil when neither is set, a `ConfigError` naming the missing or unusable one otherwise.
    static func googlePlayConfiguration(
        _ env: ProcessEnvironment, policy: SourceRequestPolicy
    ) throws(ConfigError) -> GooglePlayConfiguration? {
        let key = try env.secret("GOOGLE_PLAY_SERVICE_ACCOUNT")
        let package = env.string("GOOGLE_PLAY_PACKAGE_NAME")
        let base = try env.baseURL("GOOGLE_PLAY_BASE_URL", default: nil)
        if key == nil && package == nil {
            if base != nil { throw ConfigError("GOOGLE_PLAY_SERVICE_ACCOUNT", "is not set (GOOGLE_PLAY_BASE_URL is)") }
            return nil
        }
        guard let key else {
            throw ConfigError(
                "GOOGLE_PLAY_SERVICE_ACCOUNT", "is not set (GOOGLE_PLAY_PACKAGE_NAME is; or GOOGLE_PLAY_SERVICE_ACCOUNT_FILE)")
        }
        guard let package else { throw ConfigError("GOOGLE_PLAY_PACKAGE_NAME", "is not set (GOOGLE_PLAY_SERVICE_ACCOUNT is)") }
        let account: GoogleServiceAccount
        do {
            account = try GoogleServiceAccount(json: key)
        } catch {
            throw ConfigError("GOOGLE_PLAY_SERVICE_ACCOUNT", "is not usable: \(error)")
        }
        do {
            return try GooglePlayConfiguration(
                serviceAccount: account, packageName: package, baseURL: base ?? GooglePlayConfiguration.defaultBaseURL,
                requestPolicy: policy)
        } catch {
            throw ConfigError("GOOGLE_PLAY_PACKAGE_NAME", "is not usable: \(error)")
        }
    }

    static func databaseSettings(_ env: ProcessEnvironment) throws(ConfigError) -> DatabaseSettings {
        var values = env.values
        if let url = try env.secret("DATABASE_URL") { values["DATABASE_URL"] = url }
        if let password = try env.secret("PGPASSWORD") { values["PGPASSWORD"] = password }
        var settings: DatabaseSettings
        do {
            settings = try DatabaseSettings(environment: values)
        } catch {
            throw ConfigError(error.variable, error.reason)
        }
        settings.timeouts = try databaseTimeouts(env)
        return settings
    }

    /// `SUBRECON_DB_STATEMENT_TIMEOUT_SECONDS` (default 300), `SUBRECON_DB_LOCK_TIMEOUT_SECONDS` (10) and
    /// `SUBRECON_DB_IDLE_IN_TRANSACTION_TIMEOUT_SECONDS` (60), set on every database session; 0 = no limit.
    static func databaseTimeouts(_ env: ProcessEnvironment) throws(ConfigError) -> DatabaseSettings.Timeouts {
        let defaults = DatabaseSettings.Timeouts()
        func read(_ name: String, _ fallback: Duration) throws(ConfigError) -> Duration {
            let value = try env.number(name, default: Double(fallback.components.seconds), range: 0...86_400)
            return .milliseconds(Int64((value * 1000).rounded()))
        }
        return DatabaseSettings.Timeouts(
            statement: try read("SUBRECON_DB_STATEMENT_TIMEOUT_SECONDS", defaults.statement),
            lock: try read("SUBRECON_DB_LOCK_TIMEOUT_SECONDS", defaults.lock),
            idleInTransaction: try read("SUBRECON_DB_IDLE_IN_TRANSACTION_TIMEOUT_SECONDS", defaults.idleInTransaction))
    }

    /// Stripe from `STRIPE_API_KEY` (or `_FILE`) and `STRIPE_BASE_URL`; nil when neither is set.
    static func stripeConfiguration(
        _ env: ProcessEnvironment, policy: SourceRequestPolicy
    ) throws(ConfigError) -> StripeConfiguration? {
        let base = try env.baseURL("STRIPE_BASE_URL", default: nil)
        guard let key = try env.secret("STRIPE_API_KEY") else {
            if base != nil { throw ConfigError("STRIPE_API_KEY", "is not set (STRIPE_BASE_URL is; or STRIPE_API_KEY_FILE)") }
            return nil
        }
        return StripeConfiguration(
            baseURL: base ?? StripeConfiguration.defaultBaseURL, apiKey: key, requestPolicy: policy)
    }

    static func appStoreConfiguration(
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
