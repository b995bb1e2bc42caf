import Foundation
import Logging
import SubreconCore
import SubreconPorts
import SubreconReports

/// The refund review step (CONTRACT "Finance figures"): keeps every refund the run's verdicts carry in `refunds_seen` (not in a dry
/// run), then lists the users with at least `--refund-review-count` refunds within `--refund-review-days` in
/// `refund_review.csv` and counts them in the summary. Reads the ledger, so a rerun or a resumed run records
/// nothing twice. Never changes a tier and never queues an intent.
struct RefundReviewStep: Sendable {
    var records: any RefundRecords
    var options: RunOptions
    var logger: Logger

    func run(ledger: any VerdictLedger, runID: String, folder: RunFolder, into summary: inout RunSummary) async throws {
        // The feeds ran first and kept the refunds only they stated (FeedPhase): counted here with the verdicts'.
        var added = (summary.feeds ?? [:]).values.reduce(0) { $0 + $1.refundsNew }
        if !options.dryRun {
            var after: Int64 = -1
            let limit = max(options.tuning.applyBatchSize, 100)
            while true {
                let page = try await ledger.refunds(after: after, limit: limit)
                guard let last = page.last else { break }
                after = last.seq
                let refunds = page.flatMap { entry in entry.refunds.map { (userID: entry.userID, refund: $0) } }
                added += try await records.recordRefunds(runID: runID, refunds)
            }
        }
        let listed = try await records.refundReview(
            asOf: options.asOf, days: options.refundReviewDays, minimumRefunds: options.refundReviewCount
        ).filter { options.shard.contains($0.userID) }
        let rows = listed
        try folder.write(Data(RefundReviewCSV.text(rows).utf8), to: "refund_review.csv")
        summary.refundReview = RunSummary.RefundReview(
            users: rows.count, minimumRefunds: options.refundReviewCount, days: options.refundReviewDays, newRefunds: added)
        logger.info(
            "refund review",
            metadata: ["refunds.new": "\(added)", "refunds.review_users": "\(rows.count)"])
    }
}
