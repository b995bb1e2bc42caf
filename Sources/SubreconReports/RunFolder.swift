import Foundation
import SubreconCore

/// Errors writing reports. Messages name the path, never a secret.
public struct ReportError: Error, CustomStringConvertible, Sendable {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// Appends rows to a CSV file and a JSON array file side by side, in the order given, then moves both into place.
/// Memory stays bounded: rows are buffered in small chunks and written as they come.
public final class TableWriter<Row: Encodable & Sendable> {
    private let csvURL: URL
    private let jsonURL: URL
    private let csvTemp: URL
    private let jsonTemp: URL
    private let csv: FileHandle
    private let json: FileHandle
    private var csvBuffer = Data()
    private var jsonBuffer = Data()
    private var count = 0
    private let encoder: JSONEncoder
    private let fields: (Row) -> [String]

    public private(set) var rowCount = 0

    public init(directory: URL, name: String, columns: [String], fields: @escaping (Row) -> [String]) throws {
        csvURL = directory.appendingPathComponent("\(name).csv")
        jsonURL = directory.appendingPathComponent("\(name).json")
        csvTemp = directory.appendingPathComponent(".\(name).csv.tmp")
        jsonTemp = directory.appendingPathComponent(".\(name).json.tmp")
        for url in [csvTemp, jsonTemp] {
            guard FileManager.default.createFile(atPath: url.path, contents: nil) else {
                throw ReportError("cannot create \(url.path)")
            }
        }
        csv = try FileHandle(forWritingTo: csvTemp)
        json = try FileHandle(forWritingTo: jsonTemp)
        encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        self.fields = fields
        csvBuffer.append(contentsOf: CSV.line(columns).utf8)
        jsonBuffer.append(contentsOf: "[".utf8)
    }

    public func append(_ row: Row) throws {
        csvBuffer.append(contentsOf: CSV.line(fields(row)).utf8)
        jsonBuffer.append(contentsOf: (rowCount == 0 ? "\n  " : ",\n  ").utf8)
        jsonBuffer.append(try encoder.encode(row))
        rowCount += 1
        if csvBuffer.count > 64 * 1024 || jsonBuffer.count > 64 * 1024 { try flush() }
    }

    private func flush() throws {
        try csv.write(contentsOf: csvBuffer)
        try json.write(contentsOf: jsonBuffer)
        csvBuffer.removeAll(keepingCapacity: true)
        jsonBuffer.removeAll(keepingCapacity: true)
    }

    /// Closes both files and renames them into place (a reader never sees half a report).
    public func finish() throws {
        jsonBuffer.append(contentsOf: (rowCount == 0 ? "]\n" : "\n]\n").utf8)
        try flush()
        try csv.close()
        try json.close()
        try RunFolder.replace(csvURL, with: csvTemp)
        try RunFolder.replace(jsonURL, with: jsonTemp)
    }
}

/// `REPORT_DIR/<run_id>/` and the `latest` link.
public struct RunFolder: Sendable {
    public let root: URL
    public let runID: String
    public var url: URL { root.appendingPathComponent(runID, isDirectory: true) }

    public init(root: URL, runID: String) {
        self.root = root
        self.runID = runID
    }

    public func create() throws {
        do {
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        } catch {
            throw ReportError("cannot create report folder \(url.path): \(error.localizedDescription)")
        }
    }

    public func driftWriter() throws -> TableWriter<ReportRow> {
        try TableWriter(directory: url, name: "drift", columns: ReportRow.columns, fields: \.csvFields)
    }

    public func intentWriter() throws -> TableWriter<IntentRow> {
        try TableWriter(directory: url, name: "push_intents", columns: IntentRow.columns, fields: \.csvFields)
    }

    /// Writes a file of the run folder atomically.
    public func write(_ data: Data, to name: String) throws {
        try Self.writeAtomically(data, to: url.appendingPathComponent(name))
    }

    /// Writes `data` to `target` atomically: a hidden temporary file in the same folder (its name ends in `.tmp`,
    /// so collectors that read `*.prom` or `*.csv` skip it), then a rename, so no reader sees half a file.
    public static func writeAtomically(_ data: Data, to target: URL) throws {
        let temp = target.deletingLastPathComponent().appendingPathComponent(".\(target.lastPathComponent).\(getpid()).tmp")
        do {
            try data.write(to: temp)
        } catch {
            throw ReportError("cannot write \(temp.path): \(error.localizedDescription)")
        }
        do {
            try replace(target, with: temp)
        } catch {
            try? FileManager.default.removeItem(at: temp)
            throw error
        }
    }

    public func writeJSON<T: Encodable>(_ value: T, to name: String) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        var data = try encoder.encode(value)
        data.append(0x0A)
        try write(data, to: name)
    }

    /// Why `REPORT_DIR/latest` is not the link the job keeps (a relative symlink naming a run folder), or nil when it
    /// is, or does not exist yet. A directory, a file or a link elsewhere would make `markLatest` fail after the run
    /// applied (or silently replace someone's file): a configuration problem, found before anything is applied or
    /// asked (docs/CONTRACT.md, "Reports").
    public static func latestProblem(root: URL) -> String? {
        let link = root.appendingPathComponent("latest")
        var info = stat()
        guard lstat(link.path, &info) == 0 else { return nil }
        let what: String
        switch info.st_mode & S_IFMT {
        case S_IFLNK:
            let target = (try? FileManager.default.destinationOfSymbolicLink(atPath: link.path)) ?? ""
            if !target.isEmpty && !target.contains("/") && !target.hasPrefix(".") { return nil }
            what = "a link to \(target.debugDescription)"
        case S_IFDIR: what = "a directory"
        default: what = "a file"
        }
        return "\(link.path) is \(what), not the link subrecon keeps to the latest run folder; move it away (nothing was done)"
    }

    /// Points `REPORT_DIR/latest` at this run (a relative symlink, swapped atomically).
    public func markLatest() throws {
        let link = root.appendingPathComponent("latest")
        let temp = root.appendingPathComponent(".latest.\(runID).tmp")
        try? FileManager.default.removeItem(at: temp)
        try FileManager.default.createSymbolicLink(atPath: temp.path, withDestinationPath: runID)
        if rename(temp.path, link.path) != 0 {
            throw ReportError("cannot update \(link.path): errno \(errno)")
        }
    }

    static func replace(_ target: URL, with temp: URL) throws {
        if rename(temp.path, target.path) != 0 {
            throw ReportError("cannot move \(temp.path) to \(target.path): errno \(errno)")
        }
    }
}
