import Foundation
import SubreconCore

/// The few lines a person reads after a run; the numbers are the summary's. Text a source or a row stated (a reason,
/// a note, an id) is escaped (`TerminalText`): no control character reaches the terminal (docs/CONTRACT.md, "Commands").
public enum TerminalSummary {
    public static func text(_ s: RunSummary, folder: URL) -> String {
        func nonzero(_ counts: [String: Int]) -> String {
            let parts = counts.filter { $0.value > 0 }.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }
            return parts.isEmpty ? "none" : parts.joined(separator: ", ")
        }
        var lines: [String] = []
        lines.append("run \(s.runID) (\(s.mode), as of \(s.asOf), shard \(s.shard)\(s.dryRun ? ", dry run" : "")): \(s.status.rawValue)")
        lines.append(
            "  candidates  \(s.candidates)   applied \(s.applied)   errors \(s.errors)   concurrent updates \(s.concurrentUpdates)")
        if let words = s.usersFile?.unmatchedWords { lines.append("  users file  \(words)") }
        lines.append("  actions     \(nonzero(s.actions))")
        lines.append("  drift       \(nonzero(s.drift))")
        lines.append("  intents     queued \(s.intentsQueued), already queued before \(s.intentsDeduplicated)")
        let requests = s.requests.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value.requests) (429: \($0.value.rateLimited))" }
        lines.append("  requests    \(requests.isEmpty ? "none" : requests.joined(separator: ", "))")
        for (name, note) in s.sources.sorted(by: { $0.key < $1.key }) { lines.append("  source      \(name): \(note)") }
        for down in s.sourcesDown ?? [] {
            lines.append("  DOWN        \(down.source) since \(down.since): \(down.reason); its remaining users were not asked")
        }
        if let valve = s.valve {
            lines.append(
                String(
                    format: "  valve       %d of %d tier holders would lose it (%.0f%%, limit %.0f%%)%@", valve.wouldLoseTier,
                    valve.heldTier, valve.ratio * 100, valve.threshold * 100, valveNote(s, valve)))
        }
        for bucket in s.finance.sortedBuckets {
            let group = bucket.group == .revenue ? "" : " \(bucket.group.rawValue)"
            lines.append(
                "  finance     \(bucket.store) \(bucket.currency)\(group): refunds \(bucket.refunds.count) (\(bucket.refunds.value)), "
                    + "billing issue at risk \(bucket.billingIssueAtRisk.count) (\(bucket.billingIssueAtRisk.value)), "
                    + "restored \(bucket.restored.count) (\(bucket.restored.value))")
        }
        if let review = s.refundReview { lines.append("  refunds     review: \(FinanceCSV.refundReviewWords(review))") }
        if let orphans = s.orphans, orphans.count > 0 {
            lines.append("  orphans     \(SummaryMarkdown.oneLine(orphans.words)) paying purchases no user holds (orphans.csv)")
        }
        lines.append(String(format: "  took        %.2fs", s.timings.totalSeconds))
        lines.append("  reports     \(folder.path)")
        return TerminalText.lines(lines)
    }

    /// What the valve did: nothing when it held; "nothing applied" only when the run really stopped at it.
    static func valveNote(_ s: RunSummary, _ valve: SafetyValve) -> String {
        guard valve.tripped else { return "" }
        return s.status == .valveTripped
            ? " — TRIPPED, nothing applied" : " — tripped, accepted by --accept-downgrades: applied"
    }
}
