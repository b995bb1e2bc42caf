import Foundation
import SubreconJob
import SubreconPorts
import Testing

/// The built executable run to its end, with what it printed: for the operator-facing tests (what an operator
/// hands the job and what it reads back, docs/CONTRACT.md).
struct BinaryRun {
    var status: Int32?
    var stdout: Data
    var stderr: String

    /// The lines the executable printed for the operator (`subrecon: …`), without the JSON log lines.
    var operatorLines: [String] { stderr.split(separator: "\n").map(String.init).filter { $0.hasPrefix("subrecon: ") } }

    var stdoutText: String { String(decoding: stdout, as: UTF8.self) }

    /// Runs `subrecon ARGUMENTS` with `environment`, its output in files under `directory`.
    static func run(_ arguments: [String], environment: [String: String], directory: URL, limit: Duration = .seconds(120))
        async throws -> BinaryRun
    {
        let (process, err) = try SubreconBinary.start(arguments, environment: environment, directory: directory)
        let status = try await SubreconBinary.wait(process, limit: limit)
        let out = err.deletingLastPathComponent().appendingPathComponent(
            err.lastPathComponent.replacingOccurrences(of: "stderr-", with: "stdout-"))
        defer {
            try? FileManager.default.removeItem(at: out)
            try? FileManager.default.removeItem(at: err)
        }
        return BinaryRun(
            status: status, stdout: try Data(contentsOf: out), stderr: String(decoding: try Data(contentsOf: err), as: UTF8.self))
    }
}

/// The failure a command threw, or an issue when it did not throw one.
func commandFailure<T>(_ body: () async throws -> T) async -> CommandFailure? {
    do {
        let value = try await body()
        Issue.record("expected a failure, got \(value)")
        return nil
    } catch let failure as CommandFailure {
        return failure
    } catch {
        Issue.record("expected a CommandFailure, got \(error)")
        return nil
    }
}
