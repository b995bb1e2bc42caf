import Foundation

/// One line of the benchmark's table.
struct BenchRow {
    var label: String
    var job: JobMeasurement
    var simulator: SimulatorObservation
    var rateLimit: Double

    var seconds: Double { max(job.validateSeconds, 1e-9) }
    var usersPerSecond: Double { Double(job.candidates) / seconds }
    var revenueCatPerSecond: Double { Double(simulator.revenueCatRequests) / seconds }
    var appStorePerSecond: Double { Double(simulator.appStoreRequests) / seconds }
    var totalRequests: Int { simulator.revenueCatRequests + simulator.appStoreRequests }
    /// Achieved RevenueCat requests/s over the configured rate (every candidate costs one RevenueCat call, so
    /// RevenueCat is the budget that binds); nil without a limit.
    var efficiency: Double? { rateLimit > 0 ? revenueCatPerSecond / rateLimit : nil }

    static func table(_ rows: [BenchRow]) -> String {
        let header = [
            "row", "candidates", "validate s", "total s", "users/s", "RC req/s", "Apple req/s", "efficiency",
            "req/user", "429 share", "1 call each", "peak RSS MB", "job CPU ms/user",
        ]
        var lines = [header]
        for row in rows {
            lines.append([
                row.label, String(row.job.candidates), f(row.job.validateSeconds, 2), f(row.job.totalSeconds, 2),
                f(row.usersPerSecond, 1), f(row.revenueCatPerSecond, 1), f(row.appStorePerSecond, 1),
                row.efficiency.map { f($0, 3) } ?? "n/a",
                f(Double(row.totalRequests) / Double(max(row.job.candidates, 1)), 3),
                f(100 * Double(row.simulator.rateLimited) / Double(max(row.totalRequests, 1)), 2) + "%",
                row.simulator.exactlyOnce ? "yes" : "no", f(Double(row.job.peakRSSKB) / 1024, 1),
                f(1000 * row.job.cpuSeconds / Double(max(row.job.candidates, 1)), 3),
            ])
        }
        let widths = header.indices.map { column in lines.map { $0[column].count }.max() ?? 0 }
        var text = lines.map { line in
            "| " + zip(line, widths).map { $0.padding(toLength: $1, withPad: " ", startingAt: 0) }.joined(separator: " | ") + " |"
        }
        text.insert("| " + widths.map { String(repeating: "-", count: $0) }.joined(separator: " | ") + " |", at: 1)
        var notes: [String] = []
        for row in rows {
            notes.append(
                "\(row.label): \(row.simulator.revenueCatRequests) RevenueCat + \(row.simulator.appStoreRequests) Apple requests "
                    + "(\(row.simulator.appStoreCandidates) App Store candidates), \(row.simulator.rateLimited) answered 429, "
                    + "\(row.simulator.concurrentSameUser) same-user overlaps, applied \(row.job.applied), errors \(row.job.errors), "
                    + "exit \(row.job.exitCode)")
        }
        return (text + [""] + notes).joined(separator: "\n")
    }

    static func f(_ value: Double, _ digits: Int) -> String { String(format: "%.\(digits)f", value) }
}
