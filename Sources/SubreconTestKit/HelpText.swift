import Foundation

/// The `--help` text of the built `subrecon` executable, as an operator's terminal would show it (a wide one, so
/// ArgumentParser does not wrap option lines). Tests that hold the docs to the code read it.
public enum HelpText {
    /// `binary ARGUMENTS --help`, stdout and stderr together; nil when `binary` is not an executable file.
    public static func of(binary: String, _ arguments: [String], columns: Int = 400) throws -> String? {
        guard FileManager.default.isExecutableFile(atPath: binary) else { return nil }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = arguments + ["--help"]
        process.environment = ["PATH": "/usr/bin:/bin", "COLUMNS": String(columns)]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: output, as: UTF8.self)
    }
}
