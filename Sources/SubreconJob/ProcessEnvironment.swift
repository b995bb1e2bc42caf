import Foundation
import Synchronization

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

    /// When set, every name `secret(_:)` is asked for is noted here: `subrecon secret-names` reads the whole
    /// configuration from an empty environment with one, so the cron wrapper masks exactly what the binary treats as
    /// secrets (docs/CONTRACT.md, "The cron wrapper").
    public var secretNames: SecretNames?

    /// A secret given as `NAME`, or as `NAME_FILE` holding a path (container secrets). Both set is an error.
    public func secret(_ name: String) throws(ConfigError) -> String? {
        secretNames?.note(name)
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

/// The names of the variables read as secrets, in the order first asked (`ProcessEnvironment.secretNames`).
public final class SecretNames: Sendable {
    private let noted = Mutex<[String]>([])
    public init() {}
    public var names: [String] { noted.withLock { $0 } }
    func note(_ name: String) { noted.withLock { if !$0.contains(name) { $0.append(name) } } }
}
