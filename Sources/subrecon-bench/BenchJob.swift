import Foundation
import Logging
import SubreconApp
import SubreconCore
import SubreconDatabase
import SubreconJob
import SubreconPorts
import SubreconReports

/// What one measured run of the job reports back from its own process.
struct JobMeasurement: Codable, Sendable {
    var candidates = 0
    var validateSeconds = 0.0
    var totalSeconds = 0.0
    var revenueCatRequests = 0
    var appStoreRequests = 0
    var rateLimited = 0
    var applied = 0
    var errors = 0
    var exitCode = 0
    /// `VmHWM` of the job's process, in kB.
    var peakRSSKB = 0
    /// CPU time (user + system) of the job's process, seconds: the job alone, not the simulator or PostgreSQL.
    var cpuSeconds = 0.0
}

extension JobMeasurement {
    /// Several shard processes started together, as one: counts add up, times and peak RSS are the largest.
    static func combined(_ parts: [JobMeasurement]) -> JobMeasurement {
        var total = JobMeasurement()
        for part in parts {
            total.candidates += part.candidates
            total.validateSeconds = max(total.validateSeconds, part.validateSeconds)
            total.totalSeconds = max(total.totalSeconds, part.totalSeconds)
            total.revenueCatRequests += part.revenueCatRequests
            total.appStoreRequests += part.appStoreRequests
            total.rateLimited += part.rateLimited
            total.applied += part.applied
            total.errors += part.errors
            total.exitCode = max(total.exitCode, part.exitCode)
            total.peakRSSKB = max(total.peakRSSKB, part.peakRSSKB)
            total.cpuSeconds += part.cpuSeconds
        }
        return total
    }
}

/// Runs the real job (`Commands.run`, the `subrecon run` code path) in a child process of its own, so that its
/// peak RSS is the job's alone (the simulator and the seeding stay in the parent).
enum BenchJob {
    struct Settings: Sendable {
        var concurrency: Int
        var revenueCatRPS: Double
        var appStoreRPS: Double
        var limit: Int?
        var asOf: Date
        /// `I/N` for a shard process (`--shard`); nil: the whole table.
        var shard: String? = nil
    }

    /// Parent side: starts `/proc/self/exe --child-job RESULT ...` with `environment` and waits for it.
    static func measure(_ settings: Settings, environment: [String: String], directory: URL) async throws -> JobMeasurement {
        let result = directory.appendingPathComponent("job-\(UUID().uuidString).json")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/proc/self/exe")
        var arguments = [
            "--child-job", result.path, "--concurrency", String(settings.concurrency),
            "--client-revenuecat-rps", String(settings.revenueCatRPS), "--client-app-store-rps", String(settings.appStoreRPS),
            "--as-of-epoch", String(settings.asOf.timeIntervalSince1970), "--report-dir", directory.path,
        ]
        if let limit = settings.limit { arguments += ["--limit", String(limit)] }
        if let shard = settings.shard { arguments += ["--shard", shard] }
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let status: Int32 = try await withCheckedThrowingContinuation { continuation in
            process.terminationHandler = { continuation.resume(returning: $0.terminationStatus) }
            do { try process.run() } catch { continuation.resume(throwing: error) }
        }
        guard let data = FileManager.default.contents(atPath: result.path) else {
            throw BenchFailure("the job process exited with status \(status) and reported nothing")
        }
        try? FileManager.default.removeItem(at: result)
        return try JSONDecoder().decode(JobMeasurement.self, from: data)
    }

    /// Child side: one `Commands.run`, then the measurement as JSON at `resultPath`.
    static func runChild(_ settings: Settings, reportDirectory: URL, resultPath: String) async throws {
        var logger = Logger(label: "subrecon-bench")
        logger.logLevel = .warning
        var options = RunOptions(asOf: settings.asOf, reportDirectory: reportDirectory)
        options.concurrency = settings.concurrency
        options.sweepFreeDays = 0  // the bench's rows are candidates by the rules it seeds them for
        options.limit = settings.limit
        options.revenueCatRequestsPerSecond = settings.revenueCatRPS
        options.requestsPerSecond[.appStore] = settings.appStoreRPS
        if let shard = settings.shard.flatMap(ShardSpec.init(parsing:)) { options.shard = shard }
        let result = try await Commands.run(
            environment: ProcessEnvironment(ProcessInfo.processInfo.environment), options: options, logger: logger)
        let summary = result.summary
        var measurement = JobMeasurement()
        measurement.candidates = summary.candidates
        measurement.validateSeconds = summary.timings.validateSeconds
        measurement.totalSeconds = summary.timings.totalSeconds
        measurement.revenueCatRequests = summary.requests["revenuecat"]?.requests ?? 0
        measurement.appStoreRequests = summary.requests["app_store"]?.requests ?? 0
        measurement.rateLimited = summary.requests.values.map(\.rateLimited).reduce(0, +)
        measurement.applied = summary.applied
        measurement.errors = summary.errors
        measurement.exitCode = summary.exitCode
        measurement.peakRSSKB = peakRSSKB()
        measurement.cpuSeconds = cpuSeconds()
        try JSONEncoder().encode(measurement).write(to: URL(fileURLWithPath: resultPath))
        try? FileManager.default.removeItem(at: result.folder)
    }

    /// User + system CPU time of this process so far, in seconds.
    static func cpuSeconds() -> Double {
        var usage = rusage()
        guard getrusage(RUSAGE_SELF.rawValue, &usage) == 0 else { return 0 }
        func seconds(_ t: timeval) -> Double { Double(t.tv_sec) + Double(t.tv_usec) / 1e6 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }

    /// `VmHWM` from /proc/self/status, in kB (0 when unavailable).
    static func peakRSSKB() -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
        for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
            return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") ?? 0
        }
        return 0
    }
}

struct BenchFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
