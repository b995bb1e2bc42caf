import ArgumentParser
import Foundation
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

/// `subrecon secret-names`: the variables read as secrets, one a line.
struct SecretNames: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "secret-names", abstract: "Print the names of the variables read as secrets, one a line.", shouldDisplay: false)
    func run() { for name in ProcessEnvironment.secretNames { print(name) } }
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
