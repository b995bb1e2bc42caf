import Foundation
import SubreconCommand
import SubreconCore
import SubreconJob
import Testing

/// `--env-file` (docs/CONTRACT.md, "Environment"): the file as operators write it, parsed as systemd's
/// `EnvironmentFile` and never evaluated, and every refusal naming the file and the line, never the value. The cron
/// wrapper passes the option on (scripts/test-cron runs it with the built binary).
@Suite("Environment file: systemd EnvironmentFile syntax, exact values, refusals by line")
struct EnvironmentFileTests {
    static let secret = "sk_env_test_4711"

    /// `text` with every LF made CRLF, as a file saved on Windows.
    static func crlf(_ text: String) -> String { text.replacingOccurrences(of: "\n", with: "\r\n") }

    func values(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) -> [String: String] {
        do {
            return EnvironmentFile.merged([:], try EnvironmentFile.parse(text))
        } catch {
            Issue.record("refused: \(error)", sourceLocation: sourceLocation)
            return [:]
        }
    }

    func expectRefused(_ text: String, line: Int, _ problem: String, sourceLocation: SourceLocation = #_sourceLocation) {
        do {
            let assignments = try EnvironmentFile.parse(text)
            Issue.record("accepted as \(assignments)", sourceLocation: sourceLocation)
        } catch {
            #expect(error == EnvironmentFile.Refusal(line: line, problem: problem), sourceLocation: sourceLocation)
            #expect(!error.description.contains("sk_leak"), "the value is never named", sourceLocation: sourceLocation)
        }
    }

    @Test("every syntax form, value by value, not evaluated (CRLF line endings)")
    func everySyntaxForm() {
        let file = ##"""
            # comment
            ; comment
               # indented comment

            SUBRECON_BIN=/opt/subrecon/bin/subrecon
            export DATABASE_URL=postgres://app@db.example:5432/subrecon?sslmode=require&application_name=x
            REVENUECAT_API_KEY="sk_SECRET$HOME${USER}$(id)`id`"
            T_DQ_ESCAPES="a \"q\" \\ \$ \` \x"
            T_SQ='$HOME "dq" \n \'
            T_UNQUOTED=value with  interior spaces and $HOME   
            T_UNQ_ESCAPE=a\ b\\c\#d
            T_CONTINUED=first \
            second
            T_DQ_MULTI="line one
            line two"
            T_DQ_CONT="joined \
            here"
            T_EMPTY=
              T_INDENTED  =  spaced out  
            T_HASH=abc#not-a-comment ;not-either
            T_EQUALS=a=b==c
            T_CONCAT='it'"'"'s'
            T_QUOTE_INSIDE=a"b'c
            export T_EXPORTED='exported value'
            T_DUP=first
            T_DUP=second
            SUBRECON_ALERT_CMD=tee -a /var/tmp/alerts
            """##
        let want = [
            "SUBRECON_BIN": "/opt/subrecon/bin/subrecon",
            "DATABASE_URL": "postgres://app@db.example:5432/subrecon?sslmode=require&application_name=x",
            "REVENUECAT_API_KEY": "sk_SECRET$HOME${USER}$(id)`id`",
            "T_DQ_ESCAPES": #"a "q" \ $ ` \x"#,
            "T_SQ": #"$HOME "dq" \n \"#,
            "T_UNQUOTED": "value with  interior spaces and $HOME",
            "T_UNQ_ESCAPE": #"a b\c#d"#,
            "T_CONTINUED": "first second",
            "T_DQ_MULTI": "line one\nline two",
            "T_DQ_CONT": "joined here",
            "T_EMPTY": "",
            "T_INDENTED": "spaced out",
            "T_HASH": "abc#not-a-comment ;not-either",
            "T_EQUALS": "a=b==c",
            "T_CONCAT": "it's",
            "T_QUOTE_INSIDE": "a\"b'c",
            "T_EXPORTED": "exported value",
            "T_DUP": "second",
            "SUBRECON_ALERT_CMD": "tee -a /var/tmp/alerts",
        ]
        #expect(values(file) == want)
        #expect(values(Self.crlf(file)) == want)
        #expect(values(Self.crlf(file) + "\r\n") == want)
    }

    @Test("an operator's file: a BOM, CRLF, comments, export, an unquoted URL holding &, $ inside double quotes, spaces around =")
    func operatorsFile() {
        let file = Self.crlf(
            "\u{FEFF}# /etc/subrecon/env, edited on a laptop\n; systemd comment\n\n"
                + "export DATABASE_URL=postgres://u@h/db?sslmode=disable&search_path=s\n"
                + "REVENUECAT_API_KEY=\"\(Self.secret)$notavar${HOME}\"\n"
                + "  REVENUECAT_BASE_URL = http://127.0.0.1:9  \n"
                + "SUBRECON_ALERT_CMD=tee -a /tmp/alerts from file\n")
        #expect(
            values(file) == [
                "DATABASE_URL": "postgres://u@h/db?sslmode=disable&search_path=s",
                "REVENUECAT_API_KEY": "\(Self.secret)$notavar${HOME}",
                "REVENUECAT_BASE_URL": "http://127.0.0.1:9",
                "SUBRECON_ALERT_CMD": "tee -a /tmp/alerts from file",
            ])
    }

    @Test("the assignments keep their order; the last of a name wins; the file wins over the inherited environment")
    func orderAndPrecedence() throws {
        let assignments = try EnvironmentFile.parse("B=1\nA=2\nB=3")
        #expect(assignments == [.init("B", "1"), .init("A", "2"), .init("B", "3")])
        #expect(EnvironmentFile.merged(["A": "inherited", "C": "kept"], assignments) == ["A": "2", "B": "3", "C": "kept"])
        #expect(!"\(assignments)".contains("=1"), "an assignment prints its name only")
    }

    @Test("edges: no final newline, a continuation at the very end, an empty file, only comments, `export` as a name")
    func edges() {
        #expect(values("A=1") == ["A": "1"])
        #expect(values("A=1\\") == ["A": "1"])
        #expect(values("A='x'") == ["A": "x"])
        #expect(values("") == [:])
        #expect(values("# only\n;comments\n\n   \n") == [:])
        #expect(values("export=1\nexport\tB=2\nexport  C=3") == ["export": "1", "B": "2", "C": "3"])
        #expect(values("A=\"\"\nB=''\nC=  ") == ["A": "", "B": "", "C": ""])
        #expect(values("A='multi\nline' \nB=2") == ["A": "multi\nline", "B": "2"])
        #expect(values("A=\"é ü\"") == ["A": "é ü"])
    }

    @Test("malformed lines are refused naming the line, never the value (LF and CRLF)")
    func malformed() {
        for text in ["# ok\nREVENUECAT_BASE_URL=http://127.0.0.1:9\nthis line has no equals sign sk_leakA\n"] {
            expectRefused(text, line: 3, "not a NAME=value assignment (no '=')")
            expectRefused(Self.crlf(text), line: 3, "not a NAME=value assignment (no '=')")
        }
        for text in ["# ok\nREVENUECAT_API_KEY=\"sk_leakB\nDATABASE_URL=x\n", "A=1\nB='sk_leak\n\n"] {
            expectRefused(text, line: 2, "the quote opened on this line is never closed")
            expectRefused(Self.crlf(text), line: 2, "the quote opened on this line is never closed")
        }
        for text in ["BAD-NAME=sk_leakC\n", "1A=sk_leak", "A B=sk_leak", "Ä=sk_leak"] {
            expectRefused(text, line: 1, "the name before '=' is not a variable name")
            expectRefused(Self.crlf(text), line: 1, "the name before '=' is not a variable name")
        }
        for text in ["\n\n\n\nREVENUECAT_API_KEY=\"sk_leakD\" trailing\n", "\n\n\n\nA='sk_leak' 'glued after a space'"] {
            expectRefused(text, line: 5, "text after the closing quote")
            expectRefused(Self.crlf(text), line: 5, "text after the closing quote")
        }
        // A quote spanning lines: the text after it is on the line it closes on.
        expectRefused("A=\"sk_leak\nsk_leak\"x", line: 2, "text after the closing quote")
        // A continued line's name error names the line the assignment began on.
        expectRefused("\nBAD-NAME=sk_leak \\\nmore", line: 2, "the name before '=' is not a variable name")
    }

    @Test("invalid UTF-8 and a NUL byte are refused naming their line")
    func encoding() {
        for (bytes, problem) in [([0xFF], "not UTF-8 text (an invalid byte sequence)"), ([0], "a NUL byte")] as [([UInt8], String)] {
            do {
                let assignments = try EnvironmentFile.parse(Array("A=1\r\nB=sk_leak".utf8) + bytes + Array("\nC=3\n".utf8))
                Issue.record("accepted as \(assignments)")
            } catch {
                #expect(error == EnvironmentFile.Refusal(line: 2, problem: problem))
            }
        }
    }

    @Test("a file that does not exist or cannot be read is a configuration error naming it; a malformed one names its line")
    func loading() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("subrecon-env-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let good = folder.appendingPathComponent("env").path
        let bad = folder.appendingPathComponent("bad").path
        try Data("A='x'\r\n".utf8).write(to: URL(fileURLWithPath: good))
        try Data("A=1\nB=\"sk_leakE\" x\n".utf8).write(to: URL(fileURLWithPath: bad))
        #expect(try EnvironmentFile.load(path: good) == [.init("A", "x")])
        let cases = [
            (bad, "configuration error: environment file \(bad) line 2: text after the closing quote"),
            (folder.path, "configuration error: environment file \(folder.path) cannot be read"),
            (folder.path + "/missing", "configuration error: environment file \(folder.path)/missing does not exist"),
        ]
        for (path, line) in cases {
            #expect(throws: ConfigError.self) { try EnvironmentFile.load(path: path) }
            do {
                _ = try EnvironmentFile.load(path: path)
            } catch {
                #expect(error.description == line)
                #expect(ExitStatus.failure(error).status == .config)
            }
        }
    }

    @Test("--env-file PATH and --env-file=PATH are taken out anywhere before --; a missing path is a usage error")
    func option() throws {
        let (paths, rest) = try EnvironmentFile.option(in: ["--env-file", "a", "run", "--env-file=b", "--dry-run", "--", "--env-file", "c"])
        #expect(paths == ["a", "b"])
        #expect(rest == ["run", "--dry-run", "--", "--env-file", "c"])
        #expect(try EnvironmentFile.option(in: ["migrate"]) == ([], ["migrate"]))
        for arguments in [["run", "--env-file"], ["--env-file=", "run"], ["--env-file", "", "run"]] {
            #expect(throws: CommandFailure.self) { try EnvironmentFile.option(in: arguments) }
        }
    }

    @Test("the wrapper's answers: ExitStatus.meaning for every code, NAME=value NUL-terminated for the names set")
    func wrapperAnswers() {
        for status in ExitStatus.allCases { #expect(WrapperAnswers.meaning(of: status.rawValue) == status.meaning) }
        #expect(WrapperAnswers.meaning(of: 2) == "unexpected failure (exit 2)")
        #expect(WrapperAnswers.meaning(of: 73) == "the wrapper cannot create its log or lock file: nothing done")
        #expect(WrapperAnswers.meaning(of: 70) == "the cron wrapper itself failed")
        let names: [([String], String)] = [
            ([], "whole"), (["--shard", "0/1"], "whole"), (["--shard", "2/4"], "shard-2-of-4"),
            (["--shard=003/008", "--dry-run"], "shard-3-of-8"), (["--shard", "1/4", "--shard=2/4"], "shard-2-of-4"),
            (["--shard", "../x y"], "shard-___x_y"), (["--report-dir", "--shard"], "whole"), (["--shard", "1/"], "shard-1_"),
        ]
        for (arguments, name) in names { #expect(WrapperAnswers.lockName(arguments) == name, "\(arguments)") }
        let output = WrapperAnswers.assignments(["B", "UNSET", "A"], in: ["A": "x\ny", "B": "", "C": "z"])
        #expect(output == Array("B=".utf8) + [0] + Array("A=x\ny".utf8) + [0])
        // The binary's list of secrets is what its loaders ask `secret(_:)` for (scripts/test-cron checks the whole list).
        var env = ProcessEnvironment([:])
        env.secretNames = SecretNames()
        _ = try? PushgatewayCredentials.load(env)
        _ = try? env.secret("SUBRECON_PUSHGATEWAY_USER")
        #expect(env.secretNames?.names == ["SUBRECON_PUSHGATEWAY_USER", "SUBRECON_PUSHGATEWAY_PASSWORD"])
    }
}
