import Foundation
import Logging
import SubreconCore
import SubreconPorts
import SubreconReports
import SubreconTestKit
import Testing

@testable import SubreconJob

/// Exit 75 only for a run that was recorded and can be resumed (docs/CONTRACT.md "Exit codes"): a run that failed
/// before it was recorded, and a dry run, have nothing to resume and never say `--resume`.
@Suite("Nothing to resume: no 75", .timeLimit(.minutes(1)))
struct NothingToResumeTests {
    /// The product catalog as a database that fails to read it.
    struct FailingCatalog: CatalogSource {
        /// An adapter's failure that maps itself to 69, as the database's does (`ExitMappedFailure`).
        struct StatementTimeout: ExitMappedFailure {
            var exit: (status: SubreconCore.ExitStatus, line: String) { (.unavailable, "load product catalog: statement timeout") }
        }

        func loadCatalog() async throws -> ProductCatalog { throw StatementTimeout() }
    }

    static func job(_ world: JobFixture, catalog: any CatalogSource) -> ReconcileJob {
        let ports = JobPorts(
            candidates: world.database, catalog: catalog, journal: world.database, verdicts: world.database,
            history: world.database, feeds: nil)
        return ReconcileJob(
            ports: ports, source: world.source, stats: RequestStats(), sourcesNote: [:],
            logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }), now: world.clock.now)
    }

    static func failure(_ body: () async throws -> RunResult) async -> CommandFailure? {
        do {
            _ = try await body()
            return nil
        } catch {
            return error as? CommandFailure
        }
    }

    @Test("a catalog that cannot be read before the run is recorded: 69, no run recorded, no --resume, no source asked")
    func catalogBeforeRecording() async throws {
        try await JobFixture.with(["u-1": .lapsed]) { world in
            for dryRun in [false, true] {
                let failure = await Self.failure {
                    try await Self.job(world, catalog: FailingCatalog()).run(
                        world.options { $0.dryRun = dryRun }, runID: "run-catalog-\(dryRun)", startedAt: world.clock.now())
                }
                let line = failure?.description ?? ""
                #expect(failure?.status == .unavailable, "dry run \(dryRun): \(line)")
                #expect(!line.contains("--resume") && line.contains("start it again"), "\(line)")
                #expect(line.contains("statement timeout"), "the cause is named: \(line)")
                #expect(world.database.runStatus("run-catalog-\(dryRun)") == nil, "nothing recorded")
            }
            #expect(world.source.askedCount.isEmpty)
            #expect(world.database.audits.isEmpty)
        }
    }

    @Test("a resumed run whose catalog cannot be read is still recorded and resumable: 75 naming --resume")
    func catalogWhileResuming() async throws {
        try await JobFixture.with(["u-1": .lapsed, "u-2": .renewed]) { world in
            let stop = StopSignal()
            stop.stop(reason: "SIGTERM received", signalStatus: .terminated)
            let first = await Self.failure { try await world.run(world.options { $0.stop = stop }, runID: "run-r") }
            #expect(first?.status == .stopped, "a recorded run stopped by a signal is 75: \(first?.description ?? "")")
            let stored = try #require(try await world.database.storedRun(id: "run-r"))
            var options = world.options()
            try StoredSelection.decode(try #require(stored.selection)).apply(to: &options)
            let failure = await Self.failure {
                try await Self.job(world, catalog: FailingCatalog()).run(
                    options, runID: "run-r", startedAt: stored.record.startedAt, resume: stored.progress)
            }
            #expect(failure?.status == .stopped)
            #expect(failure?.description.contains("--resume run-r") == true, "\(failure?.description ?? "")")
        }
    }

    @Test("a dry run stopped by a signal: 143 (SIGTERM) or 130 (SIGINT), nothing to resume; stopped by a lost database: 69")
    func stoppedDryRun() async throws {
        let stops: [(String, SubreconCore.ExitStatus?, SubreconCore.ExitStatus)] = [
            ("SIGTERM received", .terminated, .terminated), ("SIGINT received", .interrupted, .interrupted),
            ("lost the shard lock: the database connection closed", nil, .unavailable),
        ]
        for (reason, signal, expected) in stops {
            try await JobFixture.with(["u-1": .lapsed, "u-2": .renewed]) { world in
                let stop = StopSignal()
                stop.stop(reason: reason, signalStatus: signal)
                let failure = await Self.failure {
                    try await world.run(
                        world.options {
                            $0.dryRun = true
                            $0.stop = stop
                        }, runID: "dry")
                }
                let line = failure?.description ?? ""
                #expect(failure?.status == expected, "\(reason): \(line)")
                #expect(!line.contains("--resume") && line.contains("nothing was changed"), "\(line)")
            }
        }
    }

    @Test("unclassified failures are never 75: an adapter's failure keeps the status it maps to, a report folder that cannot be written 78")
    func unclassified() {
        struct DiskFull: Error {}
        #expect(ExitStatus.failure(DiskFull()).status == .unavailable)
        #expect(ExitStatus.failure(CancellationError()).status == .unavailable)
        #expect(ExitStatus.failure(RunStopped(reason: "x")).status == .unavailable)
        #expect(ExitStatus.failure(FailingCatalog.StatementTimeout()).status == .unavailable)
        #expect(ExitStatus.failure(ReportError("cannot write drift.csv")).status == .config)
        #expect(ExitStatus.failure(CommandFailure(.stopped, "a recorded run")).status == .stopped)
    }
}
