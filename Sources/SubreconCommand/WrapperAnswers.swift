import SubreconCore

/// The answers the cron wrapper asks the binary for (docs/CONTRACT.md, "The cron wrapper"), so that it keeps no table
/// of its own: an exit code's meaning and the variables it needs, read from the environment files as the job reads them.
public enum WrapperAnswers {
    /// `ExitStatus.meaning`, or for a code no command exits with, that it was not expected.
    public static func meaning(of code: Int32) -> String {
        ExitStatus(rawValue: code)?.meaning ?? "unexpected failure (exit \(code))"
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
