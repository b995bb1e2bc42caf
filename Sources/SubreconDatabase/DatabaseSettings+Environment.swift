import Foundation

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
        self.init(
            host: host, unixSocketPath: socket, port: port, username: user,
            password: parts.password ?? value("PGPASSWORD"), database: parts.database ?? value("PGDATABASE") ?? user,
            sslMode: sslMode, sslRootCertificatePath: parts.sslRootCert ?? value("PGSSLROOTCERT"),
            searchPath: searchPath, applicationName: parts.applicationName ?? value("PGAPPNAME") ?? "subrecon",
            origin: origin)
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

    static func parse(_ url: String, variable: String) throws(DatabaseSettingsError) -> URLParts {
        func fail(_ reason: String) -> DatabaseSettingsError { DatabaseSettingsError(variable: variable, reason: reason) }
        func decode(_ text: Substring, _ what: String) throws(DatabaseSettingsError) -> String {
            guard let decoded = String(text).removingPercentEncoding else {
                throw fail("invalid percent-encoding in the \(what)")
            }
            return decoded
        }

        var rest = Substring(url)
        var matched = false
        for scheme in ["postgresql://", "postgres://"] where rest.lowercased().hasPrefix(scheme) {
            rest = rest.dropFirst(scheme.count)
            matched = true
            break
        }
        guard matched else { throw fail("expected a URL starting with postgres:// or postgresql://") }

        var parts = URLParts()
        // The user info is split off first, at the last '@': a password may hold '?', '#', '/', '@', '%', spaces or
        // any other character, and none of it may be mistaken for the host, path or query (or echoed in a message:
        // the errors below only ever quote text that follows the user info). An '@' after the host must be written
        // %40 when the URL has user info.
        if let at = rest.lastIndex(of: "@") {
            let userInfo = rest[..<at]
            rest = rest[rest.index(after: at)...]
            if let colon = userInfo.firstIndex(of: ":") {
                parts.user = try decode(userInfo[..<colon], "user name")
                parts.password = try decode(userInfo[userInfo.index(after: colon)...], "password")
            } else {
                parts.user = try decode(userInfo, "user name")
            }
            if parts.user == "" { parts.user = nil }
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
                if path.contains("/") { throw fail("the database name must not contain '/'") }
                parts.database = try decode(path, "database name")
            }
        }
        if hostPort.contains(",") { throw fail("several hosts are not supported") }
        if hostPort.hasPrefix("[") {
            guard let close = hostPort.firstIndex(of: "]") else { throw fail("unterminated IPv6 address") }
            parts.host = String(hostPort[hostPort.index(after: hostPort.startIndex)..<close])
            let after = hostPort[hostPort.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw fail("unexpected text after the IPv6 address") }
                parts.port = String(after.dropFirst())
            }
        } else if let colon = hostPort.firstIndex(of: ":") {
            parts.host = try decode(hostPort[..<colon], "host")
            parts.port = String(hostPort[hostPort.index(after: colon)...])
        } else if !hostPort.isEmpty {
            parts.host = try decode(hostPort, "host")
        }
        if parts.host == "" { parts.host = nil }
        if let port = parts.port {
            guard let number = Int(port), (1...65535).contains(number) else {
                throw fail("port '\(port)' is not a number in 1...65535")
            }
        }

        for item in query.split(separator: "&") where !item.isEmpty {
            let pair = item.split(separator: "=", maxSplits: 1)
            let key = try decode(pair[0], "query")
            guard pair.count == 2 else { throw fail("query parameter '\(key)' has no value") }
            let value = try decode(pair[1], "query parameter '\(key)'")
            switch key {
            case "sslmode": parts.sslMode = value
            case "sslrootcert": parts.sslRootCert = value
            case "search_path", "currentSchema": parts.searchPath = value
            case "options":
                if let path = try DatabaseSettings.searchPath(inOptions: value, variable: variable) {
                    parts.searchPath = path
                }
            case "application_name": parts.applicationName = value
            case "host": parts.host = value
            case "port":
                guard let number = Int(value), (1...65535).contains(number) else {
                    throw fail("port '\(value)' is not a number in 1...65535")
                }
                parts.port = value
            case "user": parts.user = value
            case "password": parts.password = value
            case "dbname": parts.database = value
            default: continue
            }
        }
        return parts
    }
}
