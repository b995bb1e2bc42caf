import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import SubreconCore
import SubreconJob
import SubreconPorts
import SubreconReports

/// Errors publishing metrics. Messages name the file or the Pushgateway host, never credentials in a URL.
public struct MetricsError: Error, CustomStringConvertible, Sendable {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// Publishes a run's Prometheus exposition (the run folder's `metrics.prom`): to a file for node_exporter's
/// textfile collector, and with an HTTP PUT to a Pushgateway at `/metrics/job/subrecon/shard/I_N`.
public enum MetricsPublisher {
    /// Writes `text` to `path` atomically: a temporary file in the same directory, then a rename, so the
    /// collector never reads half a file. The temporary name does not end in `.prom` (the collector ignores it).
    public static func writeFile(_ text: String, to path: URL) throws {
        do {
            try RunFolder.writeAtomically(Data(text.utf8), to: path)
        } catch {
            throw MetricsError("cannot write metrics file \(path.path): \(error)")
        }
    }

    /// The Pushgateway URL for `shard`: `BASE/metrics/job/subrecon/shard/I_N`.
    public static func pushURL(base: String, shard: ShardSpec) -> String {
        var base = base
        while base.hasSuffix("/") { base.removeLast() }
        return "\(base)/metrics/job/subrecon/shard/\(shard.index)_\(shard.count)"
    }

    /// PUTs `text` to the Pushgateway (replacing the shard's group), with HTTP basic auth when `credentials` are
    /// given. Throws on a transport error or a non-2xx answer.
    public static func push(
        _ text: String, base: String, shard: ShardSpec, credentials: PushgatewayCredentials? = nil,
        httpClient: HTTPClient, logger: Logger
    ) async throws {
        let url = pushURL(base: base, shard: shard)
        var request = HTTPClientRequest(url: url)
        request.method = .PUT
        if let credentials { request.headers.add(name: "Authorization", value: credentials.authorization) }
        request.headers.add(name: "Content-Type", value: "text/plain; version=0.0.4; charset=utf-8")
        request.body = .bytes(ByteBuffer(string: text))
        let status: UInt
        do {
            let response = try await httpClient.execute(request, timeout: .seconds(30), logger: logger)
            status = response.status.code
            _ = try? await response.body.collect(upTo: 64 * 1024)
        } catch {
            throw MetricsError("Pushgateway \(redacted(base)) unreachable: \(type(of: error))")
        }
        guard (200..<300).contains(status) else {
            throw MetricsError("Pushgateway \(redacted(base)) answered HTTP \(status)")
        }
    }

    /// Publishes the exposition a finished run wrote to its folder. Failures are logged, never thrown: metrics
    /// must not change the run's exit code (CONTRACT "Exit codes"). Returns false when something could not be published.
    @discardableResult
    public static func publish(
        runFolder: URL, shard: ShardSpec, metricsFile: String?, pushgatewayURL: String?,
        credentials: PushgatewayCredentials? = nil, logger: Logger
    ) async -> Bool {
        guard metricsFile != nil || pushgatewayURL != nil else { return true }
        let source = runFolder.appendingPathComponent("metrics.prom")
        guard let data = FileManager.default.contents(atPath: source.path) else {
            logger.error("metrics not published: the run folder has no metrics.prom", metadata: ["metrics.source": "\(source.path)"])
            return false
        }
        return await publish(
            text: String(decoding: data, as: UTF8.self), shard: shard, metricsFile: metricsFile, pushgatewayURL: pushgatewayURL,
            credentials: credentials, logger: logger)
    }

    /// Writes `text` to the metrics file and PUTs it to the Pushgateway, each when given; failures are logged.
    static func publish(
        text: String, shard: ShardSpec, metricsFile: String?, pushgatewayURL: String?, credentials: PushgatewayCredentials?,
        logger: Logger
    ) async -> Bool {
        var ok = true
        if let metricsFile {
            do {
                try writeFile(text, to: URL(fileURLWithPath: metricsFile))
                logger.info("metrics written", metadata: ["metrics.file": "\(metricsFile)"])
            } catch {
                ok = false
                logger.error("metrics file not written", metadata: ["error": "\(error)"])
            }
        }
        if let pushgatewayURL {
            do {
                try await HTTPClient.withHTTPClient { http in
                    try await push(
                        text, base: pushgatewayURL, shard: shard, credentials: credentials, httpClient: http, logger: logger)
                }
                logger.info("metrics pushed", metadata: ["metrics.pushgateway": "\(redacted(pushgatewayURL))"])
            } catch {
                ok = false
                logger.error("metrics not pushed", metadata: ["error": "\(error)"])
            }
        }
        return ok
    }

    /// Scheme, host and port only: whatever precedes the last `@` of the authority (user info, whatever characters a
    /// password holds) and any path, query or fragment are dropped.
    public static func redacted(_ url: String) -> String {
        guard let separator = url.range(of: "://") else { return "(unparseable URL)" }
        let scheme = url[..<separator.lowerBound]
        guard !scheme.isEmpty, scheme.unicodeScalars.allSatisfy(isSchemeScalar) else {
            return "(unparseable URL)"
        }
        var rest = url[separator.upperBound...]
        if let at = rest.unicodeScalars.lastIndex(of: "@") { rest = rest[rest.unicodeScalars.index(after: at)...] }
        let end = rest.unicodeScalars.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) ?? rest.endIndex
        let authority = rest[..<end]
        return authority.isEmpty ? "(unparseable URL)" : "\(scheme)://\(authority)"
    }

    private static func isSchemeScalar(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar {
        case "a"..."z", "A"..."Z", "0"..."9", "+", "-", ".": true
        default: false
        }
    }

    /// True when `url` carries user info (`user[:password]@` before the host).
    public static func hasUserInfo(_ url: String) -> Bool {
        guard let separator = url.range(of: "://") else { return url.unicodeScalars.contains("@") }
        return url[separator.upperBound...].unicodeScalars.contains("@")
    }
}

/// HTTP basic-auth credentials for the Pushgateway, from the environment only (`SUBRECON_PUSHGATEWAY_USER` and
/// `SUBRECON_PUSHGATEWAY_PASSWORD`, or their `_FILE` variants), never from the command line. `description` hides the
/// password.
public struct PushgatewayCredentials: Sendable, Hashable, CustomStringConvertible {
    public var user: String
    public var password: String

    public init(user: String, password: String) {
        self.user = user
        self.password = password
    }

    public var description: String { "PushgatewayCredentials(user: \(user), password: ***)" }

    /// The `Authorization` header value.
    public var authorization: String { "Basic " + Data("\(user):\(password)".utf8).base64EncodedString() }

    /// Reads the credentials; nil when neither is set. One without the other, or a user with ':' (basic auth cannot
    /// carry it), is a configuration error naming the variable, never the value.
    public static func load(_ env: ProcessEnvironment) throws(ConfigError) -> PushgatewayCredentials? {
        let user = try env.secret("SUBRECON_PUSHGATEWAY_USER")
        let password = try env.secret("SUBRECON_PUSHGATEWAY_PASSWORD")
        switch (user, password) {
        case (nil, nil):
            return nil
        case (let user?, let password?):
            if user.unicodeScalars.contains(":") {
                throw ConfigError("SUBRECON_PUSHGATEWAY_USER", "must not contain ':' (HTTP basic auth)")
            }
            return PushgatewayCredentials(user: user, password: password)
        case (nil, _?):
            throw ConfigError("SUBRECON_PUSHGATEWAY_USER", "is not set (SUBRECON_PUSHGATEWAY_PASSWORD is)")
        case (_?, nil):
            throw ConfigError("SUBRECON_PUSHGATEWAY_PASSWORD", "is not set (SUBRECON_PUSHGATEWAY_USER is)")
        }
    }
}

/// Where a run's metrics go (`--metrics-file`, `--pushgateway-url`) and what an exit without a run folder's metrics
/// needs to describe itself: the shard and whether it was a dry run, as given on the command line.
public struct MetricsTargets: Sendable {
    public var metricsFile: String?
    public var pushgatewayURL: String?
    public var credentials: PushgatewayCredentials?
    public var shard: ShardSpec
    public var dryRun: Bool
    /// `--report-dir`: its `latest/metrics.prom` holds the last success a good night stated, besides the metrics file.
    public var reportDirectory: URL

    public init(
        metricsFile: String?, pushgatewayURL: String?, credentials: PushgatewayCredentials?, shard: ShardSpec, dryRun: Bool,
        reportDirectory: URL
    ) {
        self.metricsFile = metricsFile
        self.pushgatewayURL = pushgatewayURL
        self.credentials = credentials
        self.shard = shard
        self.dryRun = dryRun
        self.reportDirectory = reportDirectory
    }

    var isEmpty: Bool { metricsFile == nil && pushgatewayURL == nil }
}

extension MetricsPublisher {
    static let lastSuccessMetric = "subrecon_last_success_timestamp_seconds"

    /// Publishes an exit that left no run folder's metrics — a night that failed at start (64, 69, 78, 4) or stopped
    /// (75) — so an alert on the exit code fires for it (docs/CONTRACT.md, `--metrics-file`): every count 0,
    /// `subrecon_run_exit_code` the exit status, and the last success an earlier night stated kept (read back from the
    /// metrics file or `REPORT_DIR/latest/metrics.prom`), never dropped. Failures are logged, never thrown.
    @discardableResult
    public static func publishExit(_ status: ExitStatus, to targets: MetricsTargets, now: Date = Date(), logger: Logger) async -> Bool {
        guard !targets.isEmpty else { return true }
        var summary = RunSummary(
            runID: "", mode: "", asOf: now, shard: targets.shard.description, dryRun: targets.dryRun, startedAt: now)
        summary.exitCode = Int(status.rawValue)
        summary.status = .failed
        summary.finishedAt = ISO8601.string(now)
        let text = PrometheusExposition.text(summary, lastSuccess: previousLastSuccess(targets))
        return await publish(
            text: text, shard: targets.shard, metricsFile: targets.metricsFile, pushgatewayURL: targets.pushgatewayURL,
            credentials: targets.credentials, logger: logger)
    }

    /// The latest `subrecon_last_success_timestamp_seconds` of the shard in the metrics file or the latest run
    /// folder's `metrics.prom`; nil when neither states one.
    static func previousLastSuccess(_ targets: MetricsTargets) -> Date? {
        let label = "shard=\"\(PrometheusExposition.shardLabel(targets.shard.description))\""
        var files = [targets.reportDirectory.appendingPathComponent("latest").appendingPathComponent("metrics.prom").path]
        if let metricsFile = targets.metricsFile { files.append(metricsFile) }
        var latest: Double?
        for path in files {
            guard let data = FileManager.default.contents(atPath: path) else { continue }
            for line in String(decoding: data, as: UTF8.self).split(separator: "\n")
            where line.hasPrefix(lastSuccessMetric + "{") && line.contains(label) {
                guard let value = line.split(separator: " ").last.flatMap({ Double($0) }), value.isFinite else { continue }
                latest = max(latest ?? value, value)
            }
        }
        return latest.map(Date.init(timeIntervalSince1970:))
    }
}
