import Foundation
import SubreconCore
import SubreconPorts

/// Where a run keeps its verdicts between the validate and the apply phase, in scan order.
/// A real run keeps them in PostgreSQL (resumable, re-renderable); a dry run in a file in the run folder.
package protocol VerdictLedger: Sendable {
    /// Appends verdicts with their scan positions (`seq`) and records `progress`, atomically.
    func append(_ entries: [(seq: Int64, verdict: Verdict)], progress: RunProgress) async throws
    /// The users in the ledger after the resume point `cursor`, and the first free `seq`.
    func tail(after cursor: String?) async throws -> LedgerTail
    func page(after seq: Int64, limit: Int) async throws -> [LedgerEntry]
    /// The refunds of the first `limit` entries after `seq` whose verdicts carry any.
    func refunds(after seq: Int64, limit: Int) async throws -> [LedgerRefunds]
    func apply(_ verdicts: [Verdict]) async throws -> [AppliedVerdict]
    func markUnchanged(_ seqs: [Int64]) async throws
    /// The line transfers the ledger's verdicts name.
    func transfers() async throws -> [LineTransfer]
    /// Replaces the verdicts of these users (not yet applied), or appends them when the ledger has none.
    func replace(_ verdicts: [Verdict]) async throws
}

/// The ledger in PostgreSQL. Nothing of it is kept in memory: every later phase, of this process or of a new one
/// (`--resume`, `subrecon report`), reads each page back, so a night's memory does not grow with its verdicts.
package struct DatabaseLedger: VerdictLedger {
    let database: any VerdictRecords
    let runID: String

    package init(database: any VerdictRecords, runID: String) {
        self.database = database
        self.runID = runID
    }

    package func append(_ entries: [(seq: Int64, verdict: Verdict)], progress: RunProgress) async throws {
        try await database.appendVerdicts(runID: runID, entries.map(\.verdict), seqs: entries.map(\.seq), progress: progress)
    }
    package func tail(after cursor: String?) async throws -> LedgerTail {
        try await database.ledgerTail(runID: runID, afterUser: cursor)
    }
    package func page(after seq: Int64, limit: Int) async throws -> [LedgerEntry] {
        try await database.ledgerPage(runID: runID, afterSeq: seq, limit: limit)
    }
    package func refunds(after seq: Int64, limit: Int) async throws -> [LedgerRefunds] {
        try await database.ledgerRefunds(runID: runID, afterSeq: seq, limit: limit)
    }
    package func apply(_ verdicts: [Verdict]) async throws -> [AppliedVerdict] {
        try await database.applyDetailed(verdicts, runID: runID, ledger: true)
    }
    package func markUnchanged(_ seqs: [Int64]) async throws { try await database.markUnchanged(runID: runID, seqs: seqs) }
    package func transfers() async throws -> [LineTransfer] { try await database.ledgerTransfers(runID: runID) }
    package func replace(_ verdicts: [Verdict]) async throws {
        try await database.replaceVerdicts(runID: runID, verdicts)
    }
}

/// The dry run's ledger: JSON lines in a hidden file of the run folder, removed when the run ends.
final class FileLedger: VerdictLedger, @unchecked Sendable {
    // Used from one task at a time (the job's phases run sequentially); not shared.
    let url: URL
    private let handle: FileHandle
    private var reader: FileHandle?
    private var pending = Data()
    private var nextSeq: Int64 = 0
    /// Verdicts that arrived before one scanned earlier; written as soon as the gap closes. Bounded by the job's
    /// `reorderWindow` (the scan never runs further ahead of its oldest user in flight).
    private var early: [Int64: Verdict] = [:]
    private var nextToWrite: Int64 = 0
    /// The transfers the appended verdicts named.
    private var named: [LineTransfer] = []
    /// Verdicts replacing a user's, read in its place; those of users the file does not hold come after the last.
    private var replacing: [String: Verdict] = [:]
    private var appended: [Verdict] = []

    init(url: URL) throws {
        self.url = url
        guard FileManager.default.createFile(atPath: url.path, contents: nil) else {
            throw CommandFailure(.stopped, "cannot create \(url.path); nothing was changed")
        }
        handle = try FileHandle(forWritingTo: url)
    }

    deinit {
        try? handle.close()
        try? reader?.close()
        try? FileManager.default.removeItem(at: url)
    }

    package func tail(after cursor: String?) async throws -> LedgerTail { LedgerTail(userIDs: [], nextSeq: 0) }

    /// Writes verdicts in scan order (`seq`), so a dry run's report reads like a real run's.
    package func append(_ entries: [(seq: Int64, verdict: Verdict)], progress: RunProgress) async throws {
        for (seq, verdict) in entries {
            early[seq] = verdict
            named += verdict.transfers ?? []
        }
        var ready: [Verdict] = []
        while let verdict = early.removeValue(forKey: nextToWrite) {
            ready.append(verdict)
            nextToWrite += 1
        }
        try write(ready)
    }

    private func write(_ verdicts: [Verdict]) throws {
        guard !verdicts.isEmpty else { return }
        let encoder = JSONEncoder()
        var data = Data()
        for verdict in verdicts {
            data.append(try encoder.encode(verdict))
            data.append(0x0A)
        }
        try handle.write(contentsOf: data)
    }

    /// Sequential reads only: each call continues where the previous one stopped.
    package func page(after seq: Int64, limit: Int) async throws -> [LedgerEntry] {
        if reader == nil {
            // A stopped scan leaves gaps: what is still waiting goes out in scan order before the first read.
            try write(early.keys.sorted().compactMap { early[$0] })
            early = [:]
            reader = try FileHandle(forReadingFrom: url)
        }
        let decoder = JSONDecoder()
        var entries: [LedgerEntry] = []
        while entries.count < limit {
            if let newline = pending.firstIndex(of: 0x0A) {
                let line = pending[pending.startIndex..<newline]
                var verdict = try decoder.decode(Verdict.self, from: line)
                if let replaced = replacing.removeValue(forKey: verdict.row.id) { verdict = replaced }
                entries.append(LedgerEntry(seq: nextSeq, verdict: verdict, outcome: nil, queuedIntents: []))
                nextSeq += 1
                pending = Data(pending[pending.index(after: newline)...])
                continue
            }
            guard let chunk = try reader?.read(upToCount: 1 << 20), !chunk.isEmpty else {
                // Past the file's end: the replacing verdicts of users it did not hold, once each.
                let rest = appended.filter { replacing[$0.row.id] != nil }
                for verdict in rest.prefix(limit - entries.count) {
                    replacing[verdict.row.id] = nil
                    entries.append(LedgerEntry(seq: nextSeq, verdict: verdict, outcome: nil, queuedIntents: []))
                    nextSeq += 1
                }
                break
            }
            pending.append(chunk)
        }
        return entries
    }

    package func transfers() async throws -> [LineTransfer] { named }

    /// Read through the same sequential pages (a dry run records no refunds; only a caller reading them all uses it).
    package func refunds(after seq: Int64, limit: Int) async throws -> [LedgerRefunds] {
        var found: [LedgerRefunds] = []
        while found.isEmpty {
            let page = try await page(after: seq, limit: limit)
            guard !page.isEmpty else { break }
            found = page.compactMap(LedgerRefunds.init)
        }
        return found
    }

    /// Only before the first read: a dry run replaces before its report reads the file.
    package func replace(_ verdicts: [Verdict]) async throws {
        for verdict in verdicts {
            replacing[verdict.row.id] = verdict
            appended.append(verdict)
        }
    }

    package func apply(_ verdicts: [Verdict]) async throws -> [AppliedVerdict] {
        throw CommandFailure(.stopped, "a dry run applies nothing")
    }

    package func markUnchanged(_ seqs: [Int64]) async throws {}
}
