import ArgumentParser
import Foundation
import SubreconApp
import SubreconCommand
import SubreconJob

// What the cron wrapper asks the binary instead of keeping its own copy (docs/CONTRACT.md, "The cron wrapper"):
// hidden commands, not part of the operator's interface.

/// `subrecon exit-meaning N`: the meaning of exit code N, as the wrapper's alert line states it.
struct ExitMeaning: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "exit-meaning", abstract: "Print what exit code N means (for the cron wrapper's alert line).", shouldDisplay: false)
    @Argument(help: "an exit code") var code: Int32
    func run() { print(WrapperAnswers.meaning(of: code)) }
}

/// `subrecon lock-name RUN_ARGUMENT...`: the name the wrapper's lock and log carry for a run with these arguments
/// (`whole`, or `shard-I-of-N`).
struct LockName: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lock-name", abstract: "Print the name of a run's wrapper lock and log (for the cron wrapper).",
        shouldDisplay: false)
    @Argument(parsing: .captureForPassthrough, help: "the arguments of `subrecon run`") var arguments: [String] = []
    func run() { print(WrapperAnswers.lockName(arguments)) }
}

/// `subrecon secret-names`: the variables read as secrets, one a line: the names the configuration's loaders (the
/// database, RevenueCat, every registered store, the Pushgateway) pass to `ProcessEnvironment.secret`, noted while
/// they read an environment holding only a database URL (where each asks for all of its variables and none fails).
struct SecretNamesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "secret-names", abstract: "Print the names of the variables read as secrets, one a line.", shouldDisplay: false)
    func run() {
        for name in Self.names() { print(name) }
    }

    static func names() -> [String] {
        var env = ProcessEnvironment(["DATABASE_URL": "postgres://probe@localhost/probe"])
        let noted = SecretNames()
        env.secretNames = noted
        _ = try? SubreconConfiguration.load(env, requireSource: false)
        _ = try? PushgatewayCredentials.load(env)
        return noted.names
    }
}

/// `subrecon [--env-file PATH] print-env NAME...`: `NAME=value` and a NUL for each NAME set, after the environment
/// files, so the wrapper reads its settings and the secret values it masks without parsing a file itself.
struct PrintEnvironment: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "print-env", abstract: "Print NAME=value, NUL-terminated, for each NAME set (for the cron wrapper).",
        shouldDisplay: false)
    @Argument(help: "variable names") var names: [String] = []
    func run() {
        FileHandle.standardOutput.write(Data(WrapperAnswers.assignments(names, in: ProcessInfo.processInfo.environment)))
    }
}
