import Foundation
import SubreconCore

/// Verdicts of the validate phase, one JSON object a line, so the apply phase can run after the safety valve
/// has seen every candidate without holding them all in memory.
final class VerdictSpill {
    let url: URL
    private let handle: FileHandle
    private var buffer = Data()
    private let encoder = JSONEncoder()
    private(set) var count = 0

    init(url: URL) throws {
        self.url = url
        guard FileManager.default.createFile(atPath: url.path, contents: nil) else {
            throw CommandFailure(.userErrors, "cannot create \(url.path)")
        }
        handle = try FileHandle(forWritingTo: url)
    }

    func append(_ verdict: Verdict) throws {
        buffer.append(try encoder.encode(verdict))
        buffer.append(0x0A)
        count += 1
        if buffer.count > 256 * 1024 { try flush() }
    }

    private func flush() throws {
        try handle.write(contentsOf: buffer)
        buffer.removeAll(keepingCapacity: true)
    }

    func close() throws {
        try flush()
        try handle.close()
    }

    /// Reads the verdicts back in the order they were written, `chunk` at a time.
    static func read(_ url: URL, chunk: Int, _ body: ([Verdict]) async throws -> Void) async throws {
        let handle = try FileHandle(forReadingFrom: url)
        defer { try? handle.close() }
        let decoder = JSONDecoder()
        var pending = Data()
        var batch: [Verdict] = []
        while true {
            let data = try handle.read(upToCount: 1 << 20) ?? Data()
            if data.isEmpty { break }
            pending.append(data)
            var start = pending.startIndex
            while let newline = pending[start...].firstIndex(of: 0x0A) {
                batch.append(try decoder.decode(Verdict.self, from: pending[start..<newline]))
                start = pending.index(after: newline)
                if batch.count == chunk {
                    try await body(batch)
                    batch.removeAll(keepingCapacity: true)
                }
            }
            pending = Data(pending[start...])
        }
        if !batch.isEmpty { try await body(batch) }
    }
}
