import Foundation
import SubreconCore

/// Streams `finance-FROM-TO-details.csv` (docs/CONTRACT.md, "subrecon finance"): one line per counted event, buffered in
/// small chunks into a hidden temporary file, renamed into place by `finish` (a reader never sees half a file).
public final class FinanceDetailsWriter {
    private let target: URL
    private let temp: URL
    private let handle: FileHandle
    private var buffer = Data()
    public private(set) var lineCount = 0

    public init(target: URL) throws {
        self.target = target
        temp = target.deletingLastPathComponent().appendingPathComponent(".\(target.lastPathComponent).\(getpid()).tmp")
        guard FileManager.default.createFile(atPath: temp.path, contents: nil) else { throw ReportError("cannot create \(temp.path)") }
        handle = try FileHandle(forWritingTo: temp)
        buffer.append(contentsOf: FinancePeriodCSV.detailHeader.utf8)
    }

    public func append(_ detail: FinanceDetail) throws { try append(line: FinancePeriodCSV.detailLine(detail)) }

    public func append(_ gap: FinanceGap) throws { try append(line: FinancePeriodCSV.detailGapLine(gap)) }

    private func append(line: String) throws {
        buffer.append(contentsOf: line.utf8)
        lineCount += 1
        if buffer.count > 64 * 1024 { try flush() }
    }

    private func flush() throws {
        do {
            try handle.write(contentsOf: buffer)
        } catch {
            throw ReportError("cannot write \(temp.path): \(error.localizedDescription)")
        }
        buffer.removeAll(keepingCapacity: true)
    }

    /// Closes the file and renames it into place.
    public func finish() throws {
        try flush()
        try handle.close()
        try RunFolder.replace(target, with: temp)
    }

    /// Closes and removes the temporary file (the command failed before it finished).
    public func discard() {
        try? handle.close()
        try? FileManager.default.removeItem(at: temp)
    }
}
