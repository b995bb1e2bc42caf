import Foundation
import PostgresNIO
import StoreSimulator
import SubreconApp
import SubreconCore
import SubreconJob
import SubreconPorts
import SubreconReports
import SubreconTestKit
import Testing

/// `--accept-downgrades` accepts only a run that stopped at its valve after validating every candidate;
/// every numeric and date option has a documented range, checked before anything is touched.
@Suite(
    "Accepting downgrades and option ranges", .serialized, .enabled(if: Harness.isEnabled, Harness.skip), .timeLimit(.minutes(3))
)
struct AcceptAndOptionTests {
    @Test(
        "--accept-downgrades of a run stopped before its valve: 64 naming --resume, nothing applied; of a tripped run: applied, not TRIPPED"
    )
    func acceptOnlyAtTheValve() async throws {
        try await Harness.with { h in
            _ = try await h.seedChanging(prefix: "v", count: 6)
            let stop = StopSignal()
            stop.stop(reason: "test stop before any user")
            let (status, _) = try await OwnTablesTests.failure {
                _ = try await h.run {
                    $0.stop = stop
                    $0.maxDowngradeRatio = 0.1
                }
            }
            #expect(status == .stopped)
            let runID = try #require(try await UnreadableRowTests.onlyRunID(h))
            let tiersBefore = try await h.count("select sum(current_tier)::int from users")
            let (refused, line) = try await OwnTablesTests.failure {
                _ = try await Commands.run(
                    environment: h.env,
                    options: h.options {
                        $0.acceptDowngrades = true
                        $0.maxDowngradeRatio = 0.1
                    }, logger: h.logger, resume: runID)
            }
            #expect(refused == .usage)
            #expect(line.contains("--resume \(runID)") && !line.contains("\n"), "\(line)")
            #expect(try await h.count("select count(*)::int from reconcile_changes") == 0, "nothing applied")
            #expect(try await h.count("select sum(current_tier)::int from users") == tiersBefore)
            #expect(await h.revenueCat.counters().totalRequests == 0, "refused before any source was asked")

            // Resumed, it validates everyone and stops at the valve; that run may be accepted.
            let tripped = try await Commands.run(
                environment: h.env, options: h.options { $0.maxDowngradeRatio = 0.1 }, logger: h.logger, resume: runID)
            #expect(tripped.exitStatus == .valveTripped)
            #expect(TerminalSummary.text(tripped.summary, folder: tripped.folder).contains("TRIPPED, nothing applied"))
            let accepted = try await Commands.run(
                environment: h.env, options: h.options { $0.acceptDowngrades = true }, logger: h.logger, resume: runID)
            #expect(accepted.exitStatus == .ok && accepted.summary.applied == 6)
            let text = TerminalSummary.text(accepted.summary, folder: accepted.folder)
            #expect(!text.contains("TRIPPED") && !text.contains("nothing applied"), "\(text)")
        }
    }

    @Test("out-of-range options exit 64 naming the option, before a run row is written or a source is asked (the binary)")
    func outOfRange() async throws {
        try await Harness.with { h in
            _ = try await h.seedChanging(prefix: "o", count: 2)
            let dir = h.reportDirectory.path
            let cases: [([String], String)] = [
                (["run", "--lookback-days", "200000000"], "--lookback-days"),
                (["run", "--lookback-days", "200000000", "--dry-run"], "--lookback-days"),
                (["run", "--as-of", "99999-01-01T00:00:00Z", "--dry-run"], "--as-of"),
                (["run", "--as-of", "2026-02-30T03:00:00Z", "--dry-run"], "--as-of"),
                (["run", "--feeds-since", "2026-06-01T03:00:00Zjunk", "--dry-run"], "--feeds-since"),
                (["run", "--max-downgrade-ratio", "nan", "--dry-run"], "--max-downgrade-ratio"),
                (["run", "--stripe-rps", "inf", "--dry-run"], "--stripe-rps"),
                (["run", "--sweep-days", "-1", "--dry-run"], "--sweep-days"),
                (["run", "--limit", "0", "--dry-run"], "--limit"),
                (["run", "--user-timeout", "1e300", "--dry-run"], "--user-timeout"),
                (["run", "--refund-review-count", "0", "--dry-run"], "--refund-review-count"),
                (["run", "--shard", "0/1000000", "--dry-run"], "--shard"),
                (["run", "--mode", "backfill", "--end-after", "1969-12-31T23:59:59Z", "--dry-run"], "--end-after"),
                (["explain", "o-000", "--as-of", "2201-01-01T00:00:00Z"], "--as-of"),
            ]
            for (arguments, option) in cases {
                let (process, err) = try SubreconBinary.start(
                    arguments + ["--report-dir", dir].filter { _ in arguments[0] == "run" }, environment: h.env.values,
                    directory: h.reportDirectory)
                let status = try await SubreconBinary.wait(process, limit: .seconds(60))
                let stderr = (try? String(contentsOf: err, encoding: .utf8)) ?? ""
                #expect(status == 64, "\(arguments): \(String(describing: status)) \(stderr)")
                #expect(stderr.contains(option), "\(arguments): \(stderr)")
            }
            #expect(try await h.count("select count(*)::int from reconcile_runs") == 0)
            #expect(await h.revenueCat.counters().totalRequests == 0)
        }
    }

    @Test("date options: whole RFC 3339 instants in 1970–2200 parse exactly; anything else is refused")
    func instants() {
        #expect(OptionRanges.instant("2026-06-01T03:00:00Z") == Harness.asOf)
        #expect(OptionRanges.instant("2026-06-01T05:30:00+02:30") == Harness.asOf)
        #expect(OptionRanges.instant("2026-06-01T03:00:00.250Z") == Harness.asOf.addingTimeInterval(0.25))
        #expect(OptionRanges.instant("2024-02-29T00:00:00Z") != nil)
        for bad in [
            "99999-01-01T00:00:00Z", "2026-02-30T00:00:00Z", "2025-02-29T00:00:00Z", "2026-06-01T03:00:00Zjunk",
            " 2026-06-01T03:00:00Z", "2026-06-01", "2026-06-01T24:00:00Z", "1969-12-31T23:59:59Z", "2201-01-01T00:00:00Z",
            "1970-01-01T00:30:00+01:00", "2026-06-01T03:00:00+24:00", "２026-06-01T03:00:00Z", "",
        ] {
            #expect(OptionRanges.instant(bad) == nil, "\(bad)")
        }
        // Every instant the reports write reads as the same instant as the lenient parser reads it.
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        for _ in 0..<500 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let millis = Double(state % 7_258_118_400_000)  // 1970 ..< 2200
            let date = Date(timeIntervalSince1970: millis / 1000)
            let text = ISO8601.string(date)
            let parsed = OptionRanges.instant(text)?.timeIntervalSince1970 ?? -1
            let lenient = ISO8601.date(text)?.timeIntervalSince1970 ?? -2
            #expect(abs(parsed - lenient) < 1e-6, "\(text)")
        }
        #expect(
            OptionRanges.problem("--lookback-days", 200_000_000, OptionRanges.lookbackDays)
                == "--lookback-days must be 0...3660 (got 200000000)")
        #expect(OptionRanges.problem("--max-downgrade-ratio", .nan, OptionRanges.maxDowngradeRatio) != nil)
        #expect(OptionRanges.problem("--stripe-rps", 0, OptionRanges.requestsPerSecond) == nil)
    }

    @Test("numeric options: any value is accepted exactly when it lies in the documented range; a refusal names the option")
    func numericRanges() {
        var rng = SeededRandom(seed: 19)
        let integers: [(String, ClosedRange<Int>)] = [
            ("--concurrency", OptionRanges.concurrency), ("--limit", OptionRanges.limit),
            ("--lookback-days", OptionRanges.lookbackDays), ("--sweep-days", OptionRanges.sweepDays),
            ("--refund-review-count", OptionRanges.refundReviewCount), ("--refund-review-days", OptionRanges.refundReviewDays),
        ]
        for _ in 0..<2_000 {
            let (name, range) = rng.pick(integers)
            // Near the bounds, and anywhere in Int (200000000 days once trapped the process).
            let value =
                rng.chance(0.5) ? rng.int((range.lowerBound - 3)...(range.upperBound + 3)) : Int.random(in: .min ... .max, using: &rng)
            let problem = OptionRanges.problem(name, value, range)
            #expect((problem == nil) == range.contains(value), "\(name) \(value)")
            #expect(problem.map { $0.hasPrefix(name + " ") } ?? true, "\(problem ?? "")")
        }
        let doubles: [(String, ClosedRange<Double>)] = [
            ("--max-downgrade-ratio", OptionRanges.maxDowngradeRatio), ("--user-timeout", OptionRanges.userTimeoutSeconds),
            ("--stripe-rps", OptionRanges.requestsPerSecond),
        ]
        let specials: [Double] = [.nan, .infinity, -.infinity, -0.0, .ulpOfOne, .greatestFiniteMagnitude, -.greatestFiniteMagnitude]
        for _ in 0..<2_000 {
            let (name, range) = rng.pick(doubles)
            let value =
                rng.chance(0.2) ? rng.pick(specials) : Double.random(in: (range.lowerBound - 2)...(range.upperBound * 1.5 + 2), using: &rng)
            let problem = OptionRanges.problem(name, value, range)
            #expect((problem == nil) == (value.isFinite && range.contains(value)), "\(name) \(value)")
        }
    }
}
