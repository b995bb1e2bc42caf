import AsyncHTTPClient
import Foundation
import Logging
import RevenueCat
import SourceHTTP
import SubreconCore
import SubreconDatabase
import SubreconJob
import SubreconReports

/// What `subrecon doctor` found (docs/CONTRACT.md, "subrecon doctor"): one check per line, in order.
public struct DoctorReport: Sendable {
    public var checks: [CredentialCheck]

    public init(checks: [CredentialCheck]) { self.checks = checks }

    /// 78 when a check names a configuration problem, else 69 when something could not be reached, else 0.
    public var exitStatus: ExitStatus {
        if checks.contains(where: { $0.outcome == .misconfigured }) { return .config }
        if checks.contains(where: { $0.outcome == .unreachable }) { return .unavailable }
        return .ok
    }

    /// One line each: `✓` holds, `✗` a problem (the fix in its text), `–` not checked (why in its text); text that came
    /// from elsewhere has its control characters escaped.
    public var lines: [String] {
        checks.map { check in
            let mark =
                switch check.outcome {
                case .holds: "✓"
                case .misconfigured, .unreachable: "✗"
                case .notChecked: "–"
                }
            return TerminalText.escaped("\(mark) \(check.subject): \(check.text)")
        }
    }

    /// The line naming why the exit is not 0: the first configuration problem, else the first unreachable service;
    /// nil when every check holds.
    public var problem: String? {
        let failing = checks.filter { $0.outcome == .misconfigured || $0.outcome == .unreachable }
        let count = "\(failing.count) problem\(failing.count == 1 ? "" : "s")"
        if let first = failing.first(where: { $0.outcome == .misconfigured }) {
            return "doctor: \(count); the first configuration problem: \(first.subject): \(first.text)"
        }
        if let first = failing.first { return "doctor: \(count); unreachable: \(first.subject): \(first.text)" }
        return nil
    }
}

extension Commands {
    /// `subrecon doctor` (docs/CONTRACT.md, "subrecon doctor"): the configuration as `run` loads it; the database
    /// exactly as `run` checks it before any store is asked (`withDatabase`, `checkedUsers`, `preflight`, for a run
    /// that applies); then RevenueCat's key shape and each configured store's harmless authenticated read, each store
    /// within `timeout`. Writes nothing, creates nothing at any store. Never throws: every problem is a line.
    public static func doctor(environment env: ProcessEnvironment, timeout: Duration = .seconds(30), logger: Logger) async -> DoctorReport {
        let config: SubreconConfiguration
        do {
            config = try SubreconConfiguration.load(env, requireSource: true)
        } catch {
            return DoctorReport(checks: [CredentialCheck("configuration", .misconfigured, "\(error.variable) \(error.problem)")])
        }
        var sources = config.revenueCat == nil ? [] : [FactOrigin.revenueCat.rawValue]
        sources += StoreRegistry.stores.map { $0.origin }.filter { config.stores[$0] != nil }.map { $0.rawValue }
        var checks = [
            CredentialCheck(
                "configuration", .holds,
                "read as `run` reads it: sources \(sources.joined(separator: ", ")); store environment \(config.environment.rawValue)")
        ]
        checks += await databaseChecks(config, logger: logger)
        checks += await revenueCatChecks(config, timeout: timeout, logger: logger)
        checks += await storeChecks(config, timeout: timeout, logger: logger)
        return DoctorReport(checks: checks)
    }

    /// The database as `run` checks it before any store is asked: reachable (TLS as asked), schema current, the
    /// `users` contract, and the role's privileges and row visibility for a run that applies. The first step that
    /// fails ends the checks (each needs the one before).
    static func databaseChecks(_ config: SubreconConfiguration, logger: Logger) async -> [CredentialCheck] {
        do {
            return try await withDatabase(config.database, logger: logger, requireSchema: false) { database in
                var checks: [CredentialCheck] = []
                var step = "database"
                do {
                    let identity = try await database.sessionIdentity()
                    let tls = try await config.database.negotiatedTLS(logger: logger)
                    checks.append(CredentialCheck(step, .holds, connectionText(config.database, role: identity.role, tls: tls)))
                    step = "schema"
                    try await database.requireSchema()
                    checks.append(CredentialCheck(step, .holds, "current (version \(SchemaMigrator().latestVersion))"))
                    step = "users"
                    let checked = try await checkedUsers(database, configuration: config)
                    checks.append(CredentialCheck(step, .holds, usersText(checked.users)))
                    step = "role"
                    try await preflight(checked, writing: true)
                    checks.append(
                        CredentialCheck(
                            step, .holds,
                            "may read and write what a run that applies needs (privileges, on the tables under a view too); "
                                + "every row of users is proven visible and updatable (row-level security); the server takes writes"))
                } catch {
                    checks.append(doctorCheck(step, error))
                }
                return checks
            }
        } catch {
            return [doctorCheck("database", error)]
        }
    }

    /// A database step's failure as a line, by the map every command uses (`databaseFailure`): 69 unreachable,
    /// configuration otherwise.
    static func doctorCheck(_ subject: String, _ error: any Error) -> CredentialCheck {
        switch databaseFailure(error) {
        case let failure as CommandFailure:
            return CredentialCheck(subject, failure.status == .unavailable ? .unreachable : .misconfigured, failure.description)
        case let error as ConfigError:
            return CredentialCheck(subject, .misconfigured, "\(error.variable) \(error.problem)")
        case let error as DatabaseError:
            return CredentialCheck(subject, error.isUnavailable ? .unreachable : .misconfigured, error.description)
        case let other:
            return CredentialCheck(subject, .misconfigured, "\(other)")
        }
    }

    /// The database line: where, as whom, and whether the job's own connection is encrypted (`tls`, what its client
    /// side negotiated: `DatabaseSettings.negotiatedTLS`), never what the server's backend reports, which behind a
    /// pooler is the pooler's connection (docs/CONTRACT.md, "subrecon doctor").
    static func connectionText(_ settings: DatabaseSettings, role: String, tls: String?) -> String {
        let carried =
            tls.map { "TLS \($0)" }
            ?? (settings.unixSocketPath == nil ? "not encrypted" : "a Unix socket (no TLS)")
        return
            "reachable at \(settings.endpoint)/\(settings.database) as role \(role); \(carried) (sslmode=\(settings.sslMode.rawValue))"
    }

    static func usersText(_ users: UsersRelation) -> String {
        let present = users.identifierColumns.filter { users.optionalColumns.contains($0.name) }.map(\.name)
        return "the contract holds (\(users.isTable ? "a table" : "a view"); store columns: "
            + (present.isEmpty ? "none" : present.joined(separator: ", ")) + (users.hasAccountToken ? "; account_token" : "") + ")"
    }

    /// Each configured store's lines (`StoreSource.credentialChecks`), in registry order, each store within `timeout`,
    /// over one HTTP client (the job's configuration) and no rate gate.
    static func storeChecks(_ config: SubreconConfiguration, timeout: Duration, logger: Logger) async -> [CredentialCheck] {
        do {
            return try await HTTPClient.withHTTPClient(configuration: httpConfiguration(concurrency: 1)) { http in
                let context = SourceContext(httpClient: http, stats: RequestStats(), logger: logger, gates: [:], receipts: nil)
                var checks: [CredentialCheck] = []
                for kind in StoreRegistry.stores where config.stores[kind.origin] != nil {
                    let (lines, cutOff) = await LookupDeadline.run(within: timeout) {
                        await kind.credentialChecks(from: config, context: context) ?? []
                    }
                    if cutOff || lines == nil {
                        let seconds = Double(timeout / .milliseconds(1)) / 1000
                        checks.append(
                            CredentialCheck(kind.origin.rawValue, .unreachable, "no answer within \(seconds) s (--timeout)"))
                    } else {
                        checks += lines ?? []
                    }
                }
                return checks
            }
        } catch {
            return [CredentialCheck("stores", .unreachable, "the HTTP client failed: \(type(of: error))")]
        }
    }
}
