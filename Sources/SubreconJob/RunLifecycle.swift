import Foundation
import Logging
import SubreconCore
import SubreconPorts
import SubreconReports

/// The life of one run's record: its folder, its row in `reconcile_runs` (started or resumed, finished, failed),
/// its clock, and the one place a failure after start becomes an exit status (CONTRACT "Exit codes").
///
/// The clock is injected: the instants written (`finished_at`) are read from it when they happen, never derived
/// from the start (a resumed run finishes long after its first start).
struct RunLifecycle: Sendable {
    let runID: String
    let options: RunOptions
    /// nil for a dry run: it writes nothing to the database.
    let journal: (any RunJournal)?
    let logger: Logger
    let now: @Sendable () -> Date
    let startedAt: Date

    /// The run folder, created; a folder that cannot be written, or a `latest` that is not the job's link, is a
    /// configuration error before anything is touched (docs/CONTRACT.md, "Reports"), on `--resume` too.
    func createFolder() throws -> RunFolder {
        if let problem = RunFolder.latestProblem(root: options.reportDirectory) { throw CommandFailure(.config, problem) }
        let folder = RunFolder(root: options.reportDirectory, runID: runID)
        do {
            try folder.create()
        } catch {
            throw CommandFailure(.config, "the run folder \(folder.url.path) cannot be written (\(error)); nothing done")
        }
        return folder
    }

    func newSummary(sources: [String: String]) -> RunSummary {
        var summary = RunSummary(
            runID: runID, mode: options.mode.rawValue, asOf: options.asOf, shard: options.shard.description,
            dryRun: options.dryRun, startedAt: startedAt)
        summary.sources = sources
        return summary
    }

    /// Records the run as started (with the selection `--resume` reuses) or as running again.
    func begin(resuming resume: RunProgress?) async throws {
        if let journal {
            if resume == nil {
                try await journal.startRun(
                    RunRecord(
                        id: runID, mode: options.mode, asOf: options.asOf, shard: options.shard, dryRun: false,
                        status: .running, startedAt: startedAt,
                        options: [
                            "concurrency": String(options.concurrency), "lookback_days": String(options.lookbackDays),
                            "max_downgrade_ratio": String(options.maxDowngradeRatio),
                            "limit": options.limit.map(String.init) ?? "",
                        ]))
                try await journal.recordSelection(runID: runID, selection: try StoredSelection(options).encoded())
            } else {
                try await journal.setRunStatus(id: runID, .running)
            }
            options.stop?.recorded(run: runID)
        }
        logger.info(
            resume == nil ? "run started" : "run resumed",
            metadata: [
                "run.mode": "\(options.mode.rawValue)", "run.as_of": "\(ISO8601.string(options.asOf))",
                "run.shard": "\(options.shard)", "run.dry_run": "\(options.dryRun)",
                "run.concurrency": "\(options.concurrency)", "run.validated_before": "\(resume?.validated ?? 0)",
            ])
    }

    /// Logs the valve's decision when it tripped.
    func logValve(_ valve: SafetyValve) {
        guard valve.tripped else { return }
        let overridden = valve.allowsApply(acceptingDowngrades: options.acceptDowngrades)
        logger.log(
            level: overridden ? .warning : .error,
            overridden ? "safety valve tripped, overridden by --accept-downgrades" : "safety valve tripped: nothing applied",
            metadata: [
                "valve.ratio": "\(valve.ratio)", "valve.threshold": "\(valve.threshold)",
                "valve.held_tier": "\(valve.heldTier)", "valve.would_lose_tier": "\(valve.wouldLoseTier)",
            ])
    }

    /// Stamps how the run ended on its summary, with the finish instant read from the clock now.
    func conclude(_ summary: inout RunSummary, end: RunStatus, totalSeconds: Double) {
        summary.exitCode = Int(end.exitStatus.rawValue)
        summary.status = end
        summary.timings.totalSeconds = totalSeconds
        summary.finishedAt = ISO8601.string(now())
    }

    /// Records the run as finished with its summary.
    func finish(_ summary: RunSummary, end: RunStatus) async throws {
        if let journal {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            try await journal.finishRun(
                id: runID, status: end.recorded, summary: try encoder.encode(summary),
                finishedAt: summary.finishedAt.flatMap(ISO8601.date) ?? now())
        }
        logger.info(
            "run finished",
            metadata: [
                "run.status": "\(summary.status)", "run.candidates": "\(summary.candidates)",
                "run.applied": "\(summary.applied)", "run.errors": "\(summary.errors)",
                "run.seconds": "\(summary.timings.totalSeconds)",
            ])
    }

    /// The one place a failure after start becomes the command's failure: typed failures keep their status. A run
    /// that is `recorded` (in `reconcile_runs`, so `--resume` can continue it) is marked failed and is exit 75 with the
    /// way to resume, unless the role lacked a privilege (SQLSTATE 42501; any adapter failure that maps to 78): that is
    /// 78 naming it, since every resume
    /// would fail alike until it is granted. Exit 75 is for nothing else (CONTRACT "Exit codes"): a dry run, or a run
    /// that failed before it was recorded (the product catalog could not be loaded, the run's row not written), has
    /// nothing to resume — a signal gives 130/143, anything else `ExitStatus.failure`'s code (69 for the database),
    /// saying to start again.
    func fail(_ error: any Error, recorded: Bool) async -> CommandFailure {
        if let failure = error as? CommandFailure { return failure }
        let reason = (error as? RunStopped)?.reason ?? ExitStatus.failure(error).line
        guard recorded, let journal else {
            // (a row `begin` wrote before it failed is marked failed: nothing resumes it)
            if let journal { try? await journal.setRunStatus(id: runID, .failed) }
            logger.error("run stopped before it was recorded", metadata: ["error": "\(reason)"])
            let status = options.stop?.signalStatus ?? ExitStatus.failure(error).status
            return CommandFailure(
                status,
                options.dryRun
                    ? "dry run \(runID) stopped (\(reason)); nothing was changed, nothing to resume: start it again"
                    : "run \(runID) stopped before it was recorded (\(reason)); nothing was changed, nothing to resume: start it again")
        }
        // Twice: after a server restart the first attempt may meet a connection that died with it (it fails at once).
        if (try? await journal.setRunStatus(id: runID, .failed)) == nil {
            try? await journal.setRunStatus(id: runID, .failed)
        }
        logger.error("run stopped", metadata: ["error": "\(reason)"])
        if (error as? any ExitMappedFailure)?.exit.status == .config {
            // A privilege the role lacks (or a schema the binary cannot use) fails every resume alike: configuration,
            // never 75 (docs/CONTRACT.md, "Exit codes"). The adapter says which of its failures those are.
            return CommandFailure(
                .config, "run \(runID) stopped: \(reason); once granted, `subrecon run --resume \(runID)` continues it")
        }
        return CommandFailure(
            .stopped, "run \(runID) stopped (\(reason)); nothing is lost: resume it with `subrecon run --resume \(runID)`")
    }
}
