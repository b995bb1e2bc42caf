import ArgumentParser
import SubreconApp
import SubreconJob

struct Doctor: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract:
            "Check what a night needs, one line each (✓, or ✗ with the fix): the database as `run` checks it, and each configured store's key with one harmless read.",
        discussion:
            "Writes nothing and creates nothing at any store. Exit 0 when every check holds, 78 when one names a configuration problem (the first is named last), else 69 when the database or a store could not be reached."
    )

    @Option(help: "Seconds each store's check may take, all its requests together (0 < S <= 3600).") var timeout: Double = 30

    func validate() throws {
        if let problem = OptionRanges.problem("--timeout", timeout, OptionRanges.userTimeoutSeconds) { throw ValidationError(problem) }
    }

    func run() async throws {
        let env = Startup.environment()
        let logger = Startup.logger(env)
        try await Startup.guarded(logger) {
            let report = await Commands.doctor(environment: env, timeout: .milliseconds(Int64(timeout * 1000)), logger: logger)
            for line in report.lines { print(line) }
            if let problem = report.problem { Startup.printError(problem) }
            return report.exitStatus
        }
    }
}
