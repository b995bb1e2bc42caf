import Foundation
import SubreconApp
import SubreconJob

/// A live progress line on a terminal (count, rate, ETA, errors); nothing when standard error is not a terminal.
enum ProgressLine {
    static func makeIfTerminal() -> (@Sendable (ProgressSnapshot) -> Void)? {
        guard isatty(STDERR_FILENO) != 0 else { return nil }
        return { snapshot in
            var line = "\r\u{1B}[2K\(snapshot.phase): \(snapshot.done)"
            if let total = snapshot.total { line += "/\(total)" }
            line += String(format: "  %.1f users/s", snapshot.rate)
            if let eta = snapshot.eta { line += String(format: "  ETA %.0fs", eta) }
            line += "  errors \(snapshot.errors)"
            if let total = snapshot.total, snapshot.done >= total { line += "\n" }  // a finished phase keeps its line
            FileHandle.standardError.write(Data(line.utf8))
        }
    }

    static func clear() {
        guard isatty(STDERR_FILENO) != 0 else { return }
        FileHandle.standardError.write(Data("\r\u{1B}[2K".utf8))
    }
}
