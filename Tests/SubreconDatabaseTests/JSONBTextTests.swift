import Foundation
import PostgresNIO
import SubreconCore
import SubreconDatabase
import SubreconPorts
import SubreconTestSupport
import Testing

@Suite(
    "jsonb never sees a NUL: the ledger and the run summary escape it (real PostgreSQL)", .serialized,
    .enabled(if: TestDatabase.isEnabled, TestDatabase.skipMessage))
struct JSONBTextTests {
    @Test("a verdict and a summary holding a raw NUL are stored, read back with the NUL as visible text")
    func nulInLedgerAndSummary() async throws {
        try await TestDatabase.withDatabase { db, _ in
            try await db.runs.startRun(RunRecord(id: "run-nul", mode: .nightly, asOf: Fixture.asOf, startedAt: Fixture.day(0)))
            let verdict = Verdict(
                row: ApplyTests.lapsed, truth: nil, action: .skipped, drift: [.fetchError],
                error: .sourceErrors([.init(origin: .revenueCat, message: "HTTP 400: bad\u{0}thing")]))
            var progress = RunProgress()
            progress.validated = 1
            progress.scanCursor = ApplyTests.lapsed.id
            try await db.verdicts.appendVerdicts(runID: "run-nul", [verdict], seqs: [0], progress: progress)
            let page = try await db.verdicts.ledgerPage(runID: "run-nul", afterSeq: -1, limit: 10)
            #expect(page.count == 1)
            #expect(page.first?.verdict.error?.description == #"revenuecat: HTTP 400: bad\u0000thing"#)

            let summary = try JSONEncoder().encode(["error_samples": ["u\u{0}1"]])
            try await db.runs.finishRun(id: "run-nul", status: .completed, summary: summary, finishedAt: Fixture.day(0.01))
            let stored = try #require(try await db.runs.runCountsJSON(id: "run-nul"))
            let decoded = try JSONDecoder().decode([String: [String]].self, from: stored)
            #expect(decoded["error_samples"] == [#"u\u00001"#])
        }
    }
}
