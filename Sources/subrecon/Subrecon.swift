import ArgumentParser
import CSubreconBuildInfo
import Foundation
import Logging
import SubreconApp
import SubreconCommand
import SubreconCore
import SubreconJob
import SubreconReports

@main
struct Subrecon: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "subrecon",
        abstract: "Keeps subscription tiers in PostgreSQL true to its sources: RevenueCat and every configured store.",
        discussion:
            "Exit codes: 0 ok, 1 some users errored, 3 safety valve tripped, 4 shard locked, 5 finance period with gaps, 64 usage, 66 no such user or incomplete ledger, 69 unavailable, 75 stopped (resume it), 78 configuration, 130/143 stopped by a signal with nothing to resume. Every command takes --env-file PATH: an environment file (systemd EnvironmentFile syntax) whose values win over the inherited ones.",
        version: String(cString: subrecon_build_version()),
        subcommands: [
            Migrate.self, Run.self, Explain.self, Report.self, Finance.self, Demo.self, Products.self, Doctor.self,
            ExitMeaning.self, SecretNamesCommand.self, PrintEnvironment.self, LockName.self,
        ]
    )

    /// Before anything else, on the main thread: the global `--env-file PATH` is read into the process environment
    /// (`setenv`, before NIO's threads start), then the async work moves to NIO's event loops (`EventLoopConcurrency`)
    /// and the command parses what is left of its arguments.
    static func main() async {
        let arguments = Startup.loadingEnvironmentFiles(Array(CommandLine.arguments.dropFirst()))
        EventLoopConcurrency.install()
        await main(arguments)
    }
}

/// Shared start-up: environment, logging, and turning failures into CONTRACT "Exit codes" exit codes.
enum Startup {
    static func environment() -> ProcessEnvironment { ProcessEnvironment(ProcessInfo.processInfo.environment) }

    /// The global option `--env-file PATH` (docs/CONTRACT.md, "Environment"), taken out of `arguments` wherever it
    /// stands (before a `--`): each file's assignments are set in the process environment, over the inherited values,
    /// so every command (and every read of a variable) sees them. A missing path is 64; a file that does not exist,
    /// cannot be read or is malformed is 78 naming the file and the line, never a value. Returns the arguments left.
    static func loadingEnvironmentFiles(_ arguments: [String]) -> [String] {
        do {
            let (paths, rest) = try EnvironmentFile.option(in: arguments)
            for path in paths {
                for assignment in try EnvironmentFile.load(path: path) { setenv(assignment.name, assignment.value, 1) }
            }
            return rest
        } catch {
            let failure = ExitStatus.failure(error)
            printError(failure.line)
            exit(failure.status.rawValue)
        }
    }

    static func logger(_ env: ProcessEnvironment) -> Logger {
        LogSetup.bootstrap(format: env.string("SUBRECON_LOG_FORMAT"))
        return Logger(label: "subrecon")
    }

    /// Runs `body`, printing one clear line and exiting with the right code on failure.
    static func guarded(_ logger: Logger, _ body: () async throws -> ExitStatus) async throws {
        let status: ExitStatus
        do {
            status = try await body()
        } catch {
            let failure = ExitStatus.failure(error)
            printError(failure.line)
            status = failure.status
        }
        if status != .ok { throw ExitCode(status.rawValue) }
    }

    /// The one line a failure prints; text it quotes (an id, a path, a source's message) is escaped.
    static func printError(_ line: String) {
        FileHandle.standardError.write(Data("subrecon: \(TerminalText.escaped(line))\n".utf8))
    }
}

struct Migrate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Create or upgrade the schema (idempotent).")

    func run() async throws {
        let env = Startup.environment()
        let logger = Startup.logger(env)
        try await Startup.guarded(logger) { try await Commands.migrate(environment: env, logger: logger) }
    }
}

struct Products: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List, import or check the product → tier mapping.",
        subcommands: [List.self, Import.self, Check.self], defaultSubcommand: List.self)

    struct Check: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Warn about products seen in the latest run that product_tiers does not map (exit 0, also before any run).")
        @Option(help: "Where run folders are written; the latest run is REPORT_DIR/latest.") var reportDir: String = "reports"
        func run() async throws {
            let env = Startup.environment()
            let logger = Startup.logger(env)
            try await Startup.guarded(logger) {
                let catalog = try await Commands.loadProducts(environment: env, logger: logger)
                let check = try ProductCheck.check(reportDirectory: URL(fileURLWithPath: reportDir), catalog: catalog)
                // Rows `run` refuses (78) are named first; text from a source or a row is escaped for the terminal.
                for problem in StoredCatalog.problems(catalog) { print(TerminalText.escaped("warning: product_tiers: \(problem)")) }
                for line in check.lines { print(TerminalText.escaped(line)) }
                return .ok
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print the mapping as RFC 4180 CSV (product_id,tier,entitlement); products import reads it back.")
        func run() async throws {
            let env = Startup.environment()
            let logger = Startup.logger(env)
            try await Startup.guarded(logger) {
                let catalog = try await Commands.loadProducts(environment: env, logger: logger)
                FileHandle.standardOutput.write(Data(ProductFile.csv(catalog).utf8))
                return .ok
            }
        }
    }

    struct Import: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Import a CSV (RFC 4180: product_id,tier[,entitlement], header optional) or JSON ([{product_id, tier, entitlement}]) file; all or nothing."
        )
        @Argument(help: "CSV or JSON file") var file: String
        @Flag(help: "The file becomes the whole mapping: rows of product_tiers not in it are deleted (same transaction).")
        var replace = false
        func run() async throws {
            let env = Startup.environment()
            let logger = Startup.logger(env)
            try await Startup.guarded(logger) {
                let entries = try ProductFile.parse(path: file)
                try await Commands.importProducts(entries, replacing: replace, environment: env, logger: logger)
                print("imported \(entries.count) products" + (replace ? "; product_tiers holds exactly these" : ""))
                return .ok
            }
        }
    }
}
