import Foundation

/// A configuration error: one line naming the variable; never the secret's value. Exit 78.
public struct ConfigError: Error, CustomStringConvertible, Sendable, Equatable {
    public var variable: String
    public var problem: String
    public init(_ variable: String, _ problem: String) {
        self.variable = variable
        self.problem = problem
    }
    public var description: String { "configuration error: \(variable) \(problem)" }
}

/// The process environment as a value. Only the executable reads `ProcessInfo`; everything else gets this.
public struct ProcessEnvironment: Sendable {
    public var values: [String: String]
    public init(_ values: [String: String]) { self.values = values }

    /// A non-empty value, trimmed.
    public func string(_ name: String) -> String? {
        guard let value = values[name]?.trimmingCharacters(in: .whitespacesAndNewlines), !value.isEmpty else { return nil }
        return value
    }

    /// Every variable read as a secret (docs/CONTRACT.md, "Environment": the ones marked secret), each also as
    /// `NAME_FILE`. `subrecon secret-names` prints them for the cron wrapper, which masks their values in its log;
    /// `secret(_:)` reads no other name.
    public static let secretNames = [
        "DATABASE_URL", "PGPASSWORD", "REVENUECAT_API_KEY", "APP_STORE_PRIVATE_KEY", "APPLE_SHARED_SECRET", "STRIPE_API_KEY",
        "GOOGLE_PLAY_SERVICE_ACCOUNT", "SUBRECON_PUSHGATEWAY_USER", "SUBRECON_PUSHGATEWAY_PASSWORD",
    ]

    /// A secret given as `NAME`, or as `NAME_FILE` holding a path (container secrets). Both set is an error.
    public func secret(_ name: String) throws(ConfigError) -> String? {
        assert(Self.secretNames.contains(name), "\(name) is read as a secret: add it to ProcessEnvironment.secretNames")
        let direct = values[name].flatMap { $0.isEmpty ? nil : $0 }
        guard let path = string("\(name)_FILE") else { return direct }
        if direct != nil { throw ConfigError("\(name)_FILE", "is set together with \(name); set only one") }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ConfigError("\(name)_FILE", "names a file that cannot be read: \(path)")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw ConfigError("\(name)_FILE", "names a file that is not UTF-8 text: \(path)")
        }
        let value = text.trimmingCharacters(in: .newlines)
        if value.isEmpty { throw ConfigError("\(name)_FILE", "names an empty file: \(path)") }
        return value
    }

    /// A decimal number within `range`, or `fallback` when unset.
    public func number(_ name: String, default fallback: Double, range: ClosedRange<Double>) throws(ConfigError) -> Double {
        guard let raw = string(name) else { return fallback }
        guard let value = Double(raw), range.contains(value) else {
            throw ConfigError(name, "must be a number from \(range.lowerBound) to \(range.upperBound)")
        }
        return value
    }

    /// An http(s) base URL without a trailing slash.
    public func baseURL(_ name: String, default fallback: String?) throws(ConfigError) -> String? {
        guard let raw = string(name) else { return fallback }
        guard let url = URL(string: raw), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
            url.host != nil
        else { throw ConfigError(name, "is not an http(s) URL") }
        return raw.hasSuffix("/") ? String(raw.dropLast()) : raw
    }
}
