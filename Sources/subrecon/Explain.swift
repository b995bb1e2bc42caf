import ArgumentParser
import Foundation
import SubreconApp
import SubreconCore
import SubreconJob
import SubreconReports

/// `subrecon explain USER_ID` (CONTRACT "Commands").
struct Explain: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Ask every configured source about one user, exactly as a run would, and explain the verdict (changes nothing).",
        discussion:
            "Exit 0, 1 when a source errored, 66 when the user has no row. With --json, stdout holds exactly one JSON document; logs go to stderr."
    )

    @Argument(help: "The user's id (users.id).") var userID: String
    @Option(help: "The instant to judge by (ISO 8601); default now.") var asOf: TypedOption<Instant>?
    @Flag(help: "Print one JSON document instead of text.") var json = false
    @Option(help: "Seconds the sources get for this user, all requests together (0 < S <= 3600); past it: a fetch error, exit 1.")
    var timeout: Double = 120

    func validate() throws {
        if let problem = asOf.flatMap({ OptionRanges.dateProblem("--as-of", $0.text) }) { throw ValidationError(problem) }
        if let problem = OptionRanges.problem("--timeout", timeout, OptionRanges.userTimeoutSeconds) { throw ValidationError(problem) }
    }

    func run() async throws {
        let env = Startup.environment()
        let logger = Startup.logger(env)
        try await Startup.guarded(logger) {
            let explanation = try await Commands.explain(
                environment: env, userID: userID, asOf: asOf?.value?.date ?? Date(), logger: logger,
                deadline: .milliseconds(Int64(timeout * 1000)))
            // A row's or a source's text never carries a control character to the terminal (docs/CONTRACT.md,
            // "Commands"): escaped in the text, `\uXXXX` in the JSON (the same document once parsed).
            if json {
                FileHandle.standardOutput.write(TerminalText.json(try explanation.jsonData()) + Data("\n".utf8))
            } else {
                print(TerminalText.lines(explanation.text))
            }
            return explanation.sourceErrored ? .userErrors : .ok
        }
    }
}
