import SubreconCore

/// The answers the cron wrapper asks the binary for (docs/CONTRACT.md, "The cron wrapper"), so that it keeps no table
/// of its own: an exit code's meaning and the variables it needs, read from the environment files as the job reads them.
public enum WrapperAnswers {
    /// The wrapper's own exit codes, besides subrecon's 4 and 78 (docs/CONTRACT.md, "The cron wrapper").
    public static let wrapperCodes: [Int32: String] = [
        70: "the cron wrapper itself failed", 73: "the wrapper cannot create its log or lock file: nothing done",
    ]

    /// `ExitStatus.meaning`, the wrapper's own code's, or for a code nothing exits with, that it was not expected.
    public static func meaning(of code: Int32) -> String {
        ExitStatus(rawValue: code)?.meaning ?? wrapperCodes[code] ?? "unexpected failure (exit \(code))"
    }

    /// The name a night's lock and log carry: `whole`, or `shard-I-of-N` for the last `--shard I/N` (or
    /// `--shard=I/N`) among `run`'s arguments; a value that is no shard keeps its letters and digits, the rest `_`.
    public static func lockName(_ arguments: [String]) -> String {
        var shard = "0/1"
        for (index, argument) in arguments.enumerated() {
            if argument.hasPrefix("--shard=") {
                shard = String(argument.dropFirst("--shard=".count))
            } else if index > 0, arguments[index - 1] == "--shard" {
                shard = argument
            }
        }
        let parts = shard.split(separator: "/", omittingEmptySubsequences: false)
        if parts.count == 2, let index = Int(parts[0]), let count = Int(parts[1]), index >= 0, count >= 0,
            parts.allSatisfy({ !$0.isEmpty && $0.allSatisfy(\.isASCIIDigitCharacter) })
        {
            return index == 0 && count == 1 ? "whole" : "shard-\(index)-of-\(count)"
        }
        return "shard-" + String(shard.map { $0.isASCII && ($0.isLetter || $0.isNumber) ? $0 : "_" })
    }

    /// `NAME=value` and a NUL for each of `names` that `environment` sets, in the order asked.
    public static func assignments(_ names: [String], in environment: [String: String]) -> [UInt8] {
        var output: [UInt8] = []
        for name in names {
            guard let value = environment[name] else { continue }
            output += Array("\(name)=\(value)".utf8) + [0]
        }
        return output
    }
}

extension Character {
    fileprivate var isASCIIDigitCharacter: Bool { isASCII && isNumber }
}
