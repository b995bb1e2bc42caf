import Foundation
import PostgresNIO
import StoreSimulator
import SubreconApp
import SubreconCore
import SubreconDatabase
import SubreconJob
import SubreconPorts
import SubreconReports
import SubreconTestSupport
import Testing

/// `subrecon report RUN_ID` (docs/CONTRACT.md, "Commands" and "Reports"): every report file of the run folder,
/// `orphans.csv` and `refund_review.csv` included, byte for byte, into a new folder unless asked to overwrite; a
/// ledger missing verdicts the run recorded is said, never rendered as a smaller night.
@Suite(
    "report RUN_ID re-renders the run folder byte for byte", .serialized, .enabled(if: Harness.isEnabled, Harness.skip),
    .timeLimit(.minutes(5)))
struct ReportRerenderTests {
    /// Every file of a run folder (hidden working files aside), by name.
    static func files(_ folder: URL) throws -> [String: Data] {
        var files: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: folder.path) where !name.hasPrefix(".") {
            files[name] = try Data(contentsOf: folder.appendingPathComponent(name))
        }
        return files
    }

    static let everyReport: Set<String> = [
        "drift.csv", "drift.json", "push_intents.csv", "push_intents.json", "summary.json", "finance.csv", "summary.md",
        "summary.html", "metrics.prom", "orphans.csv", "refund_review.csv",
    ]

    /// Re-renders `runID` into a fresh report directory and compares every file with `original`.
    func expectSameFolder(_ h: Harness, runID: String, original: [String: Data], _ what: String) async throws {
        let again = FileManager.default.temporaryDirectory.appendingPathComponent("subrecon-rerender-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: again) }
        let rendered = try await Commands.report(environment: h.env, runID: runID, reportDirectory: again, logger: h.logger)
        let copy = try Self.files(rendered.folder)
        #expect(Set(original.keys) == Self.everyReport, "\(what): the run wrote every report: \(original.keys.sorted())")
        #expect(Set(copy.keys) == Set(original.keys), "\(what): the same files: \(copy.keys.sorted())")
        for name in original.keys.sorted() {
            let same = copy[name] == original[name]
            #expect(same, "\(what): \(name) differs")
            if !same, let a = original[name], let b = copy[name] {
                let left = String(decoding: a, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
                let right = String(decoding: b, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
                if let line = Array(zip(left, right)).firstIndex(where: { $0.0 != $0.1 }) {
                    Issue.record("\(what): \(name) line \(line + 1):\n  ran:      \(left[line])\n  rendered: \(right[line])")
                }
            }
        }
        #expect(!FileManager.default.fileExists(atPath: again.appendingPathComponent("latest").path), "a re-render moves no latest")
    }

    /// A night with every kind of row: a downgrade, an extension, a refund (listed for review), a source error, an
    /// orphan found by Apple's feed; intents queued.
    func seedNight(_ h: Harness) async throws {
        try await h.seed(h.row("n-down", tier: 1, "active", end: -2), Harness.subscription(expires: -2))
        try await h.seed(h.row("n-renew", tier: 1, "active", end: -2), Harness.subscription(purchased: -2, expires: 28))
        try await h.seed(
            h.row("n-refund", tier: 2, "active", end: -1, product: "pro_monthly"),
            Harness.subscription("pro_monthly", expires: 20, refunded: -1, txn: "rf-1", price: 19.99))
        try await h.seed(h.row("n-fault", tier: 1, "active", end: -2), Harness.subscription(expires: 28))
        await h.revenueCat.setFault(.status(500), for: "n-fault")
        await h.appStore.setScenario(AppleWorld.active("9102", account: nil))
        await h.history.add(AppleHistoryNotification(type: "SUBSCRIBED", originalTransactionID: "9102", sentAt: Harness.day(-1)))
    }

    @Test("runs of several kinds (errors, valve tripped then accepted, a later night moving the orphans and refunds) re-render identically")
    func severalKinds() async throws {
        try await Harness.with(apple: true) { h in
            try await seedNight(h)
            let first = try await h.run {
                $0.maxDowngradeRatio = 1
                $0.refundReviewCount = 1
            }
            #expect(first.exitStatus == .userErrors)
            let firstFiles = try Self.files(first.folder)
            #expect(String(decoding: firstFiles["orphans.csv"] ?? Data(), as: UTF8.self).contains("9102"), "an orphan listed")
            #expect(String(decoding: firstFiles["refund_review.csv"] ?? Data(), as: UTF8.self).contains("n-refund"), "a refund listed")
            try await expectSameFolder(h, runID: first.summary.runID, original: firstFiles, "a night with errors")

            // A second night the valve stops, then accepted after review; the orphan seen again, one more refund.
            try await h.seed(h.row("n-down2", tier: 1, "active", end: -1), Harness.subscription(expires: -1))
            try await h.seed(
                h.row("n-refund2", tier: 1, "active", end: 20),
                Harness.subscription(expires: 20, refunded: -1, txn: "rf-2"))
            let tripped = try await h.run {
                $0.maxDowngradeRatio = 0
                $0.refundReviewCount = 1
            }
            #expect(tripped.exitStatus == .valveTripped)
            try await expectSameFolder(h, runID: tripped.summary.runID, original: try Self.files(tripped.folder), "a tripped night")
            let accepted = try await Commands.run(
                environment: h.env, options: h.options { $0.acceptDowngrades = true }, logger: h.logger, resume: tripped.summary.runID)
            #expect(accepted.exitStatus == .ok || accepted.exitStatus == .userErrors)
            try await expectSameFolder(h, runID: accepted.summary.runID, original: try Self.files(accepted.folder), "an accepted night")

            // The first night still re-renders as it ran, although the orphans and refunds have moved on since.
            try await expectSameFolder(h, runID: first.summary.runID, original: firstFiles, "the first night, later")
        }
    }

    @Test("a backfill run and each shard's run (refund review, orphans) re-render identically")
    func backfillAndShards() async throws {
        try await Harness.with(apple: true) { h in
            try await seedNight(h)
            let backfill = try await h.run {
                $0.mode = .backfill
                $0.maxDowngradeRatio = 1
                $0.refundReviewCount = 1
            }
            try await expectSameFolder(h, runID: backfill.summary.runID, original: try Self.files(backfill.folder), "a backfill run")
            for index in 0..<2 {
                let shard = try #require(ShardSpec(parsing: "\(index)/2"))
                let night = try await h.run {
                    $0.shard = shard
                    $0.maxDowngradeRatio = 1
                    $0.refundReviewCount = 1
                }
                try await expectSameFolder(
                    h, runID: night.summary.runID, original: try Self.files(night.folder), "shard \(index)/2's run")
            }
        }
    }

    @Test("pointed at the run's own folder, report writes a new folder; --overwrite rewrites the original, identically")
    func neverOverwritesUnlessAsked() async throws {
        try await Harness.with { h in
            try await h.seed(h.row("w-1", tier: 1, "active", end: -2), Harness.subscription(expires: -2))
            let result = try await h.run { $0.maxDowngradeRatio = 1 }
            let original = try Self.files(result.folder)
            // An operator's note in the original folder must survive; a changed file must not be silently replaced.
            try Data("kept".utf8).write(to: result.folder.appendingPathComponent("NOTE.txt"))
            try Data("edited".utf8).write(to: result.folder.appendingPathComponent("summary.md"))
            let rendered = try await Commands.report(
                environment: h.env, runID: result.summary.runID, reportDirectory: h.reportDirectory, logger: h.logger)
            #expect(rendered.folder.standardizedFileURL != result.folder.standardizedFileURL, "a new folder")
            #expect(try String(contentsOf: result.folder.appendingPathComponent("summary.md"), encoding: .utf8) == "edited")
            #expect(try Self.files(rendered.folder) == original)
            #expect(
                try FileManager.default.destinationOfSymbolicLink(atPath: h.reportDirectory.appendingPathComponent("latest").path)
                    == result.summary.runID, "latest still names the run")

            let run = try await BinaryRun.run(
                ["report", result.summary.runID, "--report-dir", h.reportDirectory.path, "--overwrite"], environment: h.env.values,
                directory: h.reportDirectory)
            #expect(run.status == 0, "\(run.operatorLines)")
            var after = try Self.files(result.folder)
            #expect(after.removeValue(forKey: "NOTE.txt") == Data("kept".utf8))
            #expect(after == original, "overwritten with the same bytes")
        }
    }

    @Test("a ledger missing verdicts the run recorded is said (66), not rendered as a smaller night")
    func missingVerdicts() async throws {
        try await Harness.with { h in
            _ = try await h.seedChanging(prefix: "m", count: 8)
            let result = try await h.run { $0.maxDowngradeRatio = 1 }
            #expect(result.summary.candidates == 8)
            try await h.client.query("delete from reconcile_verdicts where run_id = \(result.summary.runID) and user_id > 'm-003'")
            let again = FileManager.default.temporaryDirectory.appendingPathComponent("subrecon-rerender-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: again) }
            let refused = await commandFailure {
                try await Commands.report(environment: h.env, runID: result.summary.runID, reportDirectory: again, logger: h.logger)
            }
            #expect(refused?.status == .noInput, "\(refused?.description ?? "")")
            #expect(refused?.description.contains("4 of the 8") == true, "\(refused?.description ?? "")")
            let written = (try? FileManager.default.contentsOfDirectory(atPath: again.path)) ?? []
            #expect(written.filter { !$0.hasPrefix(".") }.isEmpty, "nothing rendered: \(written)")
        }
    }
}
