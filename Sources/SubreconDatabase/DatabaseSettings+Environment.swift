import Foundation
import SubreconPorts

extension DatabaseSettings {
    /// Builds the settings from an environment dictionary (see the type's documentation).
    ///
    /// URL query parameters understood: `sslmode`, `sslrootcert`, `search_path`, `options` (`-c name=value`,
    /// `-cname=value`; `search_path` among them is honoured), `application_name`, `host` (a directory means a unix
    /// socket), `port`, `user`, `password`, `dbname`. Others are ignored.
    /// - Throws: `DatabaseSettingsError` naming the variable; its text never contains the password.
    public init(environment: [String: String]) throws(DatabaseSettingsError) {
        func value(_ name: String) -> String? {
            guard let text = environment[name], !text.isEmpty else { return nil }
            return text
        }
        var parts = URLParts()
        var origin = "PG*"
        if let url = value("DATABASE_URL") {
            parts = try URLParts.parse(url, variable: "DATABASE_URL")
            origin = "DATABASE_URL"
        }
        // libpq: whatever the URL does not say comes from the PG* variables, then the defaults.
        let hostText = parts.host ?? value("PGHOST") ?? "localhost"
        let portVariable = parts.port != nil ? "DATABASE_URL" : "PGPORT"
        let portText = parts.port ?? value("PGPORT") ?? "5432"
        guard let port = Int(portText), (1...65535).contains(port) else {
            throw DatabaseSettingsError(variable: portVariable, reason: "port '\(portText)' is not a number in 1...65535")
        }
        guard let user = parts.user ?? value("PGUSER") ?? value("USER") else {
            throw DatabaseSettingsError(variable: "PGUSER", reason: "no database user given (set DATABASE_URL or PGUSER)")
        }
        let sslVariable = parts.sslMode != nil ? "DATABASE_URL" : "PGSSLMODE"
        let sslText = parts.sslMode ?? value("PGSSLMODE") ?? SSLMode.prefer.rawValue
        guard let sslMode = SSLMode(rawValue: sslText) else {
            let allowed = SSLMode.allCases.map(\.rawValue).joined(separator: ", ")
            throw DatabaseSettingsError(variable: sslVariable, reason: "sslmode '\(sslText)' is not one of \(allowed)")
        }
        var searchPath = parts.searchPath
        if searchPath == nil, let options = value("PGOPTIONS") {
            searchPath = try Self.searchPath(inOptions: options, variable: "PGOPTIONS")
        }

        var host: String? = hostText
        var socket: String?
        if hostText.hasPrefix("/") {
            socket = "\(hostText.hasSuffix("/") ? String(hostText.dropLast()) : hostText)/.s.PGSQL.\(port)"
            host = nil
        }
        let rootCertificates = parts.sslRootCert ?? value("PGSSLROOTCERT")
        if let rootCertificates, sslMode == .verifyCA || sslMode == .verifyFull {
            try Self.checkRootCertificates(rootCertificates, variable: parts.sslRootCert != nil ? "DATABASE_URL" : "PGSSLROOTCERT")
        }
        self.init(
            host: host, unixSocketPath: socket, port: port, username: user,
            password: parts.password ?? value("PGPASSWORD"), database: parts.database ?? value("PGDATABASE") ?? user,
            sslMode: sslMode, sslRootCertificatePath: rootCertificates,
            searchPath: searchPath, applicationName: parts.applicationName ?? value("PGAPPNAME") ?? "subrecon",
            origin: origin)
    }

    /// The `sslrootcert` file must be one the job can read and that holds a PEM certificate: a missing or unreadable
    /// file is a configuration problem (78) named at start, not a refused connection (docs/CONTRACT.md, "Database").
    static func checkRootCertificates(_ path: String, variable: String) throws(DatabaseSettingsError) {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw DatabaseSettingsError(variable: variable, reason: "sslrootcert '\(path)' does not exist or cannot be read")
        }
        guard let text = String(data: data, encoding: .utf8), text.contains("-----BEGIN CERTIFICATE-----") else {
            throw DatabaseSettingsError(variable: variable, reason: "sslrootcert '\(path)' holds no PEM certificate")
        }
    }

    /// The `search_path` in a libpq `options` string (`-c search_path=x`, `-csearch_path=x`), if any.
    static func searchPath(inOptions options: String, variable: String) throws(DatabaseSettingsError) -> String? {
        var tokens = options.split(whereSeparator: \.isWhitespace).map(String.init)[...]
        var found: String?
        while let token = tokens.popFirst() {
            var setting: String
            if token == "-c" || token == "--" {
                guard let next = tokens.popFirst() else {
                    throw DatabaseSettingsError(variable: variable, reason: "options: '\(token)' without a setting")
                }
                setting = next
            } else if token.hasPrefix("-c") {
                setting = String(token.dropFirst(2))
            } else if token.hasPrefix("--") {
                setting = String(token.dropFirst(2))
            } else {
                continue
            }
            setting = setting.replacingOccurrences(of: "-", with: "_", options: .anchored)
            let pair = setting.split(separator: "=", maxSplits: 1).map(String.init)
            if pair.count == 2, pair[0].replacingOccurrences(of: "-", with: "_") == "search_path" {
                found = pair[1]
            }
        }
        return found
    }
}

/// The pieces of a `postgres://` URL. Parsed by hand: libpq URLs allow what `URLComponents` rejects.
struct URLParts {
    var user: String?
    var password: String?
    var host: String?
    var port: String?
    var database: String?
    var sslMode: String?
    var sslRootCert: String?
    var searchPath: String?
    var applicationName: String?

    /// Parses a `postgres://` / `postgresql://` URL: scheme, user info, host and port, database, query.
    static func parse(_ url: String, variable: String) throws(DatabaseSettingsError) -> URLParts {
        var rest = Substring(url)
        var matched = false
        for scheme in ["postgresql://", "postgres://"] where rest.lowercased().hasPrefix(scheme) {
            rest = rest.dropFirst(scheme.count)
            matched = true
            break
        }
        guard matched else { throw fail("expected a URL starting with postgres:// or postgresql://", variable) }

        var parts = URLParts()
        // The user info is split off first, at the last '@': a password may hold '?', '#', '/', '@', '%', spaces or
        // any other character, and none of it may be mistaken for the host, path or query (or echoed in a message:
        // the errors below only ever quote text that follows the user info). An '@' after the host must be written
        // %40 when the URL has user info.
        if let at = rest.lastIndex(of: "@") {
            try parts.readUserInfo(rest[..<at], variable: variable)
            rest = rest[rest.index(after: at)...]
        }
        if let hash = rest.firstIndex(of: "#") { rest = rest[..<hash] }
        var query: Substring = ""
        if let mark = rest.firstIndex(of: "?") {
            query = rest[rest.index(after: mark)...]
            rest = rest[..<mark]
        }
        var hostPort = rest
        if let slash = rest.firstIndex(of: "/") {
            hostPort = rest[..<slash]
            let path = rest[rest.index(after: slash)...]
            if !path.isEmpty {
                if path.contains("/") { throw fail("the database name must not contain '/'", variable) }
                parts.database = try decode(path, "database name", variable)
            }
        }
        try parts.readHostPort(hostPort, variable: variable)
        try parts.readQuery(query, variable: variable)
        return parts
    }

    static func fail(_ reason: String, _ variable: String) -> DatabaseSettingsError {
        DatabaseSettingsError(variable: variable, reason: reason)
    }

    static func decode(_ text: Substring, _ what: String, _ variable: String) throws(DatabaseSettingsError) -> String {
        guard let decoded = String(text).removingPercentEncoding else {
            throw fail("invalid percent-encoding in the \(what)", variable)
        }
        return decoded
    }

    /// `user[:password]`, percent-decoded; never quoted in an error.
    mutating func readUserInfo(_ userInfo: Substring, variable: String) throws(DatabaseSettingsError) {
        if let colon = userInfo.firstIndex(of: ":") {
            user = try Self.decode(userInfo[..<colon], "user name", variable)
            password = try Self.decode(userInfo[userInfo.index(after: colon)...], "password", variable)
        } else {
            user = try Self.decode(userInfo, "user name", variable)
        }
        if user == "" { user = nil }
    }

    /// `host[:port]`, `[ipv6][:port]`; one host only; the port 1...65535.
    mutating func readHostPort(_ hostPort: Substring, variable: String) throws(DatabaseSettingsError) {
        if hostPort.contains(",") { throw Self.fail("several hosts are not supported", variable) }
        if hostPort.hasPrefix("[") {
            guard let close = hostPort.firstIndex(of: "]") else { throw Self.fail("unterminated IPv6 address", variable) }
            host = String(hostPort[hostPort.index(after: hostPort.startIndex)..<close])
            let after = hostPort[hostPort.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw Self.fail("unexpected text after the IPv6 address", variable) }
                port = String(after.dropFirst())
            }
        } else if let colon = hostPort.firstIndex(of: ":") {
            host = try Self.decode(hostPort[..<colon], "host", variable)
            port = String(hostPort[hostPort.index(after: colon)...])
        } else if !hostPort.isEmpty {
            host = try Self.decode(hostPort, "host", variable)
        }
        if host == "" { host = nil }
        if let port {
            guard let number = Int(port), (1...65535).contains(number) else {
                throw Self.fail("port '\(port)' is not a number in 1...65535", variable)
            }
        }
    }

    /// The query parameters libpq knows that matter here; others are ignored.
    mutating func readQuery(_ query: Substring, variable: String) throws(DatabaseSettingsError) {
        for item in query.split(separator: "&") where !item.isEmpty {
            let pair = item.split(separator: "=", maxSplits: 1)
            let key = try Self.decode(pair[0], "query", variable)
            guard pair.count == 2 else { throw Self.fail("query parameter '\(key)' has no value", variable) }
            let value = try Self.decode(pair[1], "query parameter '\(key)'", variable)
            switch key {
            case "sslmode": sslMode = value
            case "sslrootcert": sslRootCert = value
            case "search_path", "currentSchema": searchPath = value
            case "options":
                if let path = try DatabaseSettings.searchPath(inOptions: value, variable: variable) { searchPath = path }
            case "application_name": applicationName = value
            case "host": host = value
            case "port":
                guard let number = Int(value), (1...65535).contains(number) else {
                    throw Self.fail("port '\(value)' is not a number in 1...65535", variable)
                }
                port = value
            case "user": user = value
            case "password": password = value
            case "dbname": database = value
            default: continue
            }
        }
    }
}
