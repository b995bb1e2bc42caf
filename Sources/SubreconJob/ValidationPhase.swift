import Foundation
import SourceHTTP
import SubreconCore
import SubreconPorts

/// The validate phase (CONTRACT "Which users a run asks about", "Sources and the decision"): streams candidates after the run's resume point, asks the sources about up to
/// `concurrency` users at once, decides, and appends each verdict to the ledger as soon as it is known.
///
/// A verdict's `seq` is its position in the scan, so the ledger reads in scan order whatever order answers came in;
/// no verdict waits in memory for a slower user before it. The stored `scanCursor` is the id just before the oldest
/// user still in flight: everything up to it is in the ledger, and a resumed run skips the users after it that are
/// in the ledger already (`ledgerTail`). The scan never runs more than `reorderWindow` users ahead of its oldest
/// user in flight, which bounds that tail; a user gets `userDeadline` for all its requests.
package struct ValidationPhase: Sendable {
    var candidates: any CandidateSource
    var source: any FactSource
    var ledger: any VerdictLedger
    var context: DecisionContext
    var options: RunOptions
    /// The candidates to scan: the run's selection with what its feeds gave it (`RunOptions.selection`).
    var selection: CandidateQuery
    var progress: (@Sendable (ProgressSnapshot) -> Void)?
    /// What tonight's feeds gave each user (its links and refunds), which travels with its row (`FeedHarvest.carried`).
    var harvest = FeedHarvest()

    enum Event: Sendable {
        case verdict(Int, Verdict)
        case stop
    }

    /// Validates every candidate not validated yet; returns the run's progress with `scanDone` set, or throws
    /// `RunStopped` (after writing what was validated) when the run was asked to stop.
    func run(from initial: RunProgress, start: ContinuousClock.Instant) async throws -> RunProgress {
        var total = try await candidates.countCandidates(selection)
        if let limit = options.limit { total = min(total, limit) }
        let tail = try await ledger.tail(after: initial.scanCursor)
        var tracker = ValidationTracker(state: initial, seqBase: tail.nextSeq, skip: tail.userIDs, options: options)
        var reporter = ProgressReporter(progress: progress, total: total, start: start)
        let stopped: String? = try await withThrowingTaskGroup(of: Event.self) { group in
            if let stop = options.stop {
                group.addTask {
                    await stop.wait()
                    return .stop
                }
            }
            var stopped = try await scan(into: &group, tracker: &tracker, reporter: &reporter)
            while stopped == nil, tracker.hasInFlight, let event = try await group.next() {
                if try await !take(event, tracker: &tracker, reporter: &reporter) { stopped = stopReason() ?? "stopped" }
            }
            if stopped == nil { stopped = stopReason() }
            // The resume point is fixed before the users still in flight are dropped: they are asked again.
            let cursor = tracker.watermark()
            group.cancelAll()
            while try await group.next() != nil {}
            tracker.state.scanDone = stopped == nil
            tracker.state.scanCursor = cursor
            // The last verdicts, and the scan's end (or where a stopped scan resumes), in one write.
            try await ledger.append(tracker.takeBatch(), progress: tracker.state)
            return stopped
        }
        reporter.report(tracker.state, force: true)
        if let stopped { throw RunStopped(reason: stopped) }
        return tracker.state
    }

    /// Submits candidates page by page until the scan ends; returns why it stopped early, if it did.
    private func scan(
        into group: inout ThrowingTaskGroup<Event, any Error>, tracker: inout ValidationTracker, reporter: inout ProgressReporter
    ) async throws -> String? {
        let concurrency = max(1, options.concurrency)
        let remaining = options.limit.map { max(0, $0 - Int(tracker.state.validated)) }
        guard remaining != 0 else { return nil }
        var stopped: String?
        try await forEachPage(after: tracker.state.scanCursor) { page in
            for row in page {
                if let reason = stopReason() {
                    stopped = reason
                    return false
                }
                if let remaining, tracker.submitted >= remaining { return false }
                if tracker.skipIfValidated(row) { continue }
                while tracker.isFull(concurrency: concurrency) {
                    guard let event = try await group.next() else { break }
                    if try await !take(event, tracker: &tracker, reporter: &reporter) {
                        stopped = stopReason() ?? "stopped"
                        return false
                    }
                }
                let row = harvest.carried(by: row)
                let index = tracker.submit(row)
                let (source, context, deadline) = (source, context, options.userDeadline)
                group.addTask {
                    // An unreadable row (CONTRACT "Hostile answers and bounded work") is its user's row_error: no source is asked about it.
                    let facts =
                        row.rowError == nil
                        ? await Self.facts(for: row, from: source, deadline: deadline)
                        : SourceFacts(revenueCatKnowsSubscriber: false, revenueCatPurchases: [])
                    var verdict = Decision.decide(row: row, facts: facts, context: context)
                    verdict.candidateReasons = row.candidateReasons
                    return .verdict(index, verdict)
                }
            }
            return true
        }
        return stopped
    }

    /// Calls `body` with each page of candidates after `cursor`; the next page is fetched while `body` works on the
    /// current one (structured: an `async let`, cancelled with its scope). `body` returns false to end the scan.
    private func forEachPage(after cursor: String?, _ body: ([UserRow]) async throws -> Bool) async throws {
        let (candidates, selection, pageSize) = (candidates, selection, options.tuning.pageSize)
        var page = try await candidates.candidatePage(selection, after: cursor, limit: pageSize)
        while true {
            let last = page.count >= pageSize ? page.last?.id : nil
            async let next: [UserRow] = last == nil ? [] : candidates.candidatePage(selection, after: last, limit: pageSize)
            guard try await body(page), last != nil else { return }
            page = try await next
        }
    }

    /// Takes one event; false when the run was asked to stop.
    private func take(_ event: Event, tracker: inout ValidationTracker, reporter: inout ProgressReporter) async throws -> Bool {
        guard case .verdict(let index, let verdict) = event, stopReason() == nil else { return false }
        if tracker.record(index, verdict) {
            try await ledger.append(tracker.takeBatch(), progress: tracker.state)
        }
        reporter.report(tracker.state)
        return true
    }

    private func stopReason() -> String? {
        if let reason = options.stop?.reason { return reason }
        return Task.isCancelled ? "interrupted" : nil
    }

    /// What the sources say about `row`, within `deadline` for all its requests together (`LookupDeadline`: no
    /// wait a source asks for is started past it, and the lookups are cancelled at it); past it the user is a
    /// `fetch_error` tonight. `what` names the deadline in that error.
    package static func facts(
        for row: UserRow, from source: any FactSource, deadline: Duration, what: String = "the per-user deadline"
    ) async -> SourceFacts {
        let (facts, cutOff) = await LookupDeadline.run(within: deadline) { await source.facts(for: row) }
        if let facts, !cutOff { return facts }
        let message =
            cutOff ? "no complete answer within \(what) of \(seconds(deadline)) s; asked again next run" : "cancelled"
        return .failed(SourceError(origin: source.origins.first ?? .revenueCat, kind: .fetch, message: message))
    }
}

/// The validate phase's bookkeeping: which users are in flight, where a resume would start, what is to be written.
struct ValidationTracker {
    var state: RunProgress
    let seqBase: Int64
    /// Users after the resume point already in the ledger (validated before the run stopped): not asked again.
    var skip: Set<String>
    let window: Int
    let ledgerBatchSize: Int
    private(set) var submitted = 0
    /// Users in flight: scan index → id of the user scanned just before it (the resume point while it is the oldest).
    private var inFlight: [Int: String?] = [:]
    /// Scan indices in submission order; entries no longer in flight are dropped lazily.
    private var order: [Int] = []
    private var orderHead = 0
    private var lastScannedID: String?
    private var batch: [(seq: Int64, verdict: Verdict)] = []

    init(state: RunProgress, seqBase: Int64, skip: Set<String>, options: RunOptions) {
        self.state = state
        self.seqBase = seqBase
        self.skip = skip
        self.window = max(max(1, options.concurrency), options.tuning.reorderWindow)
        self.ledgerBatchSize = options.tuning.ledgerBatchSize
        self.lastScannedID = state.scanCursor
    }

    var hasInFlight: Bool { !inFlight.isEmpty }

    /// Whether to wait for an answer before submitting more: all workers busy, or the scan a window ahead.
    mutating func isFull(concurrency: Int) -> Bool {
        inFlight.count >= concurrency || oldestInFlight().map { submitted - $0 >= window } == true
    }

    /// True (and remembered as scanned) when the user's verdict is already in the ledger.
    mutating func skipIfValidated(_ row: UserRow) -> Bool {
        guard skip.remove(row.id) != nil else { return false }
        lastScannedID = row.id
        return true
    }

    /// A user handed to a worker; returns its scan index.
    mutating func submit(_ row: UserRow) -> Int {
        let index = submitted
        submitted += 1
        inFlight[index] = .some(lastScannedID)
        order.append(index)
        lastScannedID = row.id
        return index
    }

    /// Records a decided verdict; true when a batch is due for the ledger.
    mutating func record(_ index: Int, _ verdict: Verdict) -> Bool {
        inFlight[index] = nil
        batch.append((seqBase + Int64(index), verdict))
        state.validated += 1
        if verdict.row.currentTier > 0 { state.heldTier += 1 }
        if verdict.losesTier { state.wouldLoseTier += 1 }
        if verdict.isError { state.userErrors += 1 }
        if batch.count >= ledgerBatchSize {
            state.scanCursor = watermark()
            return true
        }
        return false
    }

    /// The verdicts waiting for the ledger, handed over.
    mutating func takeBatch() -> [(seq: Int64, verdict: Verdict)] {
        defer { batch.removeAll(keepingCapacity: true) }
        return batch
    }

    /// Everything scanned up to this id has its verdict in the ledger (once the batch is written).
    mutating func watermark() -> String? {
        guard let oldest = oldestInFlight() else { return lastScannedID }
        return inFlight[oldest] ?? nil
    }

    private mutating func oldestInFlight() -> Int? {
        while orderHead < order.count, inFlight[order[orderHead]] == nil { orderHead += 1 }
        if orderHead > 4096 && orderHead * 2 > order.count {
            order.removeFirst(orderHead)
            orderHead = 0
        }
        return orderHead < order.count ? order[orderHead] : nil
    }
}

/// Progress lines of a phase at most twice a second.
struct ProgressReporter {
    let progress: (@Sendable (ProgressSnapshot) -> Void)?
    let total: Int?
    let start: ContinuousClock.Instant
    private var last = ContinuousClock.now

    init(progress: (@Sendable (ProgressSnapshot) -> Void)?, total: Int?, start: ContinuousClock.Instant) {
        self.progress = progress
        self.total = total
        self.start = start
    }

    mutating func report(_ state: RunProgress, force: Bool = false) {
        let now = ContinuousClock.now
        guard force || now - last > .milliseconds(500) else { return }
        last = now
        progress?(
            ProgressSnapshot(
                phase: "validate", done: Int(state.validated), total: total, errors: state.userErrors,
                elapsed: seconds(now - start)))
    }
}
