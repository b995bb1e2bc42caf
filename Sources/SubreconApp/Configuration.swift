import Foundation
import RevenueCat
import SourceHTTP
import SubreconCore
import SubreconDatabase
import SubreconJob

/// Everything `subrecon` reads from the environment (CONTRACT "Environment"), validated once, before anything is touched.
/// `description` never shows a secret.
public struct SubreconConfiguration: Sendable, CustomStringConvertible {
    public var database: DatabaseSettings
    public var revenueCat: RevenueCatConfiguration?
    /// `production` unless `APP_STORE_ENVIRONMENT=sandbox`: the environment every source's purchases are judged in.
    public var environment: StoreEnvironment
    /// Each configured store's configuration (its adapter's `Configuration`), by origin; a store whose variables
    /// are unset has none.
    public var stores: [FactOrigin: any Sendable & CustomStringConvertible] = [:]

    public init(database: DatabaseSettings, revenueCat: RevenueCatConfiguration?, environment: StoreEnvironment) {
        self.database = database
        self.revenueCat = revenueCat
        self.environment = environment
    }

    public var description: String {
        let revenueCatText = revenueCat.map { String(describing: $0) } ?? "none"
        let storeTexts = StoreRegistry.stores.map { kind in
            "\(kind.origin.rawValue): \(stores[kind.origin].map { String(describing: $0) } ?? "not configured")"
        }
        return "SubreconConfiguration(database: \(database), revenueCat: \(revenueCatText), "
            + storeTexts.joined(separator: ", ") + ", environment: \(environment.rawValue))"
    }

    /// True when at least one source is configured (CONTRACT "Environment": `run` needs one).
    public var hasSource: Bool { revenueCat != nil || !stores.isEmpty }

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
        let v1Key = try env.secret("REVENUECAT_API_KEY")
        if let key = v1Key {
            let base = try env.baseURL("REVENUECAT_BASE_URL", default: RevenueCatConfiguration.defaultBaseURL)!
            revenueCat = RevenueCatConfiguration(
                baseURL: base, apiKey: key, requestPolicy: policy.limitingBodies(to: RevenueCatConfiguration.defaultMaxBodyBytes))
        }
        // Read (and refused when unusable) with or without the v1 key: alone it is a 78 naming REVENUECAT_API_KEY.
        let v2 = try revenueCatV2(env, v1Key: v1Key, baseURL: revenueCat?.baseURL ?? RevenueCatConfiguration.defaultBaseURL, policy: policy)
        revenueCat?.v2 = v2
        var configuration = SubreconConfiguration(database: database, revenueCat: revenueCat, environment: environment)
        for kind in StoreRegistry.stores {
            if let loaded = try kind.load(env, policy: policy, environment: environment) { configuration.stores[kind.origin] = loaded }
        }
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

}
