import Foundation
import PostgresNIO
import StoreSimulator
import SubreconApp
import SubreconCore
import SubreconDatabase
import SubreconJob
import SubreconPorts
import SubreconReports
import SubreconTestKit
import Testing

/// Every command-line default is the documented one. `subrecon run` with no option at all is run for real
/// (the binary, a real database) and what it stored is read back; every `(default: …)` in the commands' help is
/// checked against `docs/CONTRACT.md`.
@Suite(
    "Command-line defaults are the documented ones", .serialized, .enabled(if: Harness.isEnabled, Harness.skip),
    .timeLimit(.minutes(3)))
struct CommandDefaultsTests {
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    @Test(
        "`subrecon run` with no options: as-of now, nightly, shard 0/1, concurrency 16, lookback 60, sweep 30, valve 0.5 (it trips), budgets 10/50/10/20, refund review 3 in 365 days, ./reports"
    )
    func runWithNoOptions() async throws {
        try await Harness.with { h in
            try await Self.seedLapsedNow(h)
            let directory = h.reportDirectory.appendingPathComponent("cwd")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let before = Date()
            let status = try await BinaryCommand.run(["run"], environment: h.env.values, directory: directory)
            let after = Date()
            // The one tier holder would lose its tier: 1 of 1 is over the default valve of 0.5, so nothing is applied.
            #expect(status == 3, "the safety valve at its default 0.5 tripped")

            try await Self.checkStoredDefaults(h, before: before, after: after)

            // The report folder is `reports` under the working directory; the run was not a dry run.
            let latest = directory.appendingPathComponent("reports/latest/summary.json")
            let summary = try JSONDecoder().decode(RunSummary.self, from: try Data(contentsOf: latest))
            #expect(summary.dryRun == false && summary.mode == "nightly" && summary.shard == "0/1")
            #expect(summary.sources["revenuecat"]?.contains("budget 10 req/s") == true, "\(summary.sources)")
            #expect(summary.valve?.threshold == 0.5 && summary.valve?.tripped == true, "\(String(describing: summary.valve))")
            #expect(try await h.user("d-1")?.currentTier == 1, "the valve tripped: nothing applied")
        }
    }

    /// One tier holder whose period ended two days before now (no --as-of: the run judges by now), and RevenueCat's
    /// clock set to now.
    static func seedLapsedNow(_ h: Harness) async throws {
        let now = Date()
        await h.revenueCat.setClock(now)
        try await h.db.insertUsers([
            UserRow(
                id: "d-1", currentTier: 1, status: "active", endDate: now.addingTimeInterval(-2 * 86_400), source: "apple_iap",
                productID: "premium_monthly", autoRenew: true)
        ])
        await h.revenueCat.setSubscriber(
            SimulatedSubscriber(
                firstSeen: now.addingTimeInterval(-300 * 86_400),
                subscriptions: [
                    SimulatedSubscription(
                        productID: "premium_monthly", purchaseDate: now.addingTimeInterval(-32 * 86_400),
                        expiresDate: now.addingTimeInterval(-2 * 86_400))
                ]), for: "d-1")
    }

    /// The options and selection the run stored are the documented defaults; its as-of lies in `before...after`.
    static func checkStoredDefaults(_ h: Harness, before: Date, after: Date) async throws {
        var stored: [(String, String)] = []
        for try await row in try await h.client.query("select options::text, selection::text from reconcile_runs").decode(
            (String, String).self)
        {
            stored.append(row)
        }
        let (optionsText, selectionText) = try #require(stored.first)
        #expect(stored.count == 1)
        let options = try JSONDecoder().decode([String: String].self, from: Data(optionsText.utf8))
        #expect(options["concurrency"] == "16")
        #expect(options["lookback_days"] == "60")
        #expect(options["max_downgrade_ratio"] == "0.5")
        #expect(options["limit"] == "", "no limit")

        let selection = try #require(try JSONSerialization.jsonObject(with: Data(selectionText.utf8)) as? [String: Any])
        #expect(selection["mode"] as? String == "nightly")
        #expect(selection["shardIndex"] as? Int == 0 && selection["shardCount"] as? Int == 1)
        #expect(selection["lookbackDays"] as? Int == 60)
        #expect(selection["sweepDays"] as? Int == 30)
        #expect(selection["sweepFreeDays"] as? Int == 90)
        #expect(selection["maxDowngradeRatio"] as? Double == 0.5)
        #expect(selection["revenueCatRPS"] as? Double == 10)
        let storeRPS = selection["storeRPS"] as? [String: Double]
        #expect(storeRPS?["app_store"] == nil, "unset: 50 in production, 5 in sandbox")
        #expect(storeRPS?["google_play"] == 10)
        #expect(storeRPS?["stripe"] == 20)
        #expect(selection["refundReviewCount"] as? Int == 3)
        #expect(selection["refundReviewDays"] as? Int == 365)
        #expect(selection["userIDs"] == nil && selection["limit"] == nil && selection["endAfter"] == nil && selection["endBefore"] == nil)
        #expect(selection["environment"] as? String == "production")
        let asOf = try #require(selection["asOf"] as? Double)
        #expect(
            asOf >= (before.timeIntervalSince1970 * 1000).rounded(.down) - 1 && asOf <= after.timeIntervalSince1970 * 1000 + 1,
            "as-of is now")
    }

    @Test("every `(default: …)` in the help of run, explain, report, demo and products check is the documented default")
    func helpDefaultsAreDocumented() throws {
        let contract = try ContractTable.rows(of: "Options of `subrecon run`", packageRoot: Self.packageRoot)
        let documented = Dictionary(contract.map { ($0[0], $0[2]) }, uniquingKeysWith: { first, _ in first })
        let runHelp = try BinaryCommand.help(["run"])
        let defaults = HelpDefaults.parse(runHelp)
        #expect(defaults.count >= 14, "defaults found in `run --help`: \(defaults)")
        for (option, shown) in defaults {
            let doc = try #require(documented[option], "\(option) is not in docs/CONTRACT.md")
            #expect(HelpDefaults.same(shown, doc), "\(option): help says \(shown), docs/CONTRACT.md says \(doc)")
        }
        // The options without a `(default: …)` are documented as absent, or state their default in prose.
        for option in Set(documented.keys).subtracting(defaults.keys) {
            let doc = documented[option] ?? ""
            switch option {
            case "--app-store-rps":
                #expect(doc.contains("50 (production)") && doc.contains("5 (sandbox)"))
                #expect(runHelp.contains("default 50 production, 5 sandbox"))
            case "--feeds-since":
                #expect(
                    doc.contains(
                        "at most 30 days back; a feed never read: the start of this shard's last completed nightly run (at most 7 days back), else 3 days"
                    ))
                #expect(
                    runHelp.contains(
                        "at most 30 days back; a feed never read: this shard's last completed nightly run (at most 7 days back), else 3 days"
                    ))
            case "--as-of": #expect(doc == "now")
            default: #expect(["none", "off"].contains(doc), "\(option): documented default \(doc)")
            }
        }
        #expect(
            HelpDefaults.parse(try BinaryCommand.help(["explain"])) == ["--timeout": "120.0"],
            "docs/CONTRACT.md: explain --timeout default 120")
        for command in [["report"], ["demo"], ["products", "check"]] {
            #expect(HelpDefaults.parse(try BinaryCommand.help(command)) == ["--report-dir": "reports"], "\(command)")
        }
    }
}

/// The `(default: …)` of every option in ArgumentParser's help text.
enum HelpDefaults {
    static func parse(_ help: String) -> [String: String] {
        var defaults: [String: String] = [:]
        var option: String?
        for line in help.split(separator: "\n").map(String.init) {
            if line.hasPrefix("  ") && !line.hasPrefix("   ") {
                option = line.split(separator: " ").map(String.init).first { $0.hasPrefix("--") }
            }
            guard let option, let start = line.range(of: "(default: ", options: .backwards) else { continue }
            let rest = line[start.upperBound...]
            guard let end = rest.lastIndex(of: ")") else { continue }
            defaults[option] = String(rest[..<end])
        }
        return defaults
    }

    /// `120.0` in help is `120` in the docs; text is compared as is.
    static func same(_ shown: String, _ documented: String) -> Bool {
        if let a = Double(shown), let b = Double(documented) { return a == b }
        return shown == documented
    }
}

/// The cells (backticks removed) of every body row of the first table under `## heading` in docs/CONTRACT.md.
enum ContractTable {
    struct Missing: Error, CustomStringConvertible { var description: String }

    static func rows(of heading: String, packageRoot: URL) throws -> [[String]] {
        let url = packageRoot.appendingPathComponent("docs/CONTRACT.md")
        guard let data = FileManager.default.contents(atPath: url.path) else { throw Missing(description: "\(url.path) missing") }
        let lines = String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
        guard let start = lines.firstIndex(of: Substring("## " + heading)) else { throw Missing(description: "no `## \(heading)`") }
        let section = lines[(start + 1)...].prefix { !$0.hasPrefix("## ") }
        let table = section.drop { !$0.hasPrefix("|") }.prefix { $0.hasPrefix("|") }.dropFirst(2)
        return table.map { row in
            row.dropFirst().dropLast().split(separator: "|", omittingEmptySubsequences: false).map {
                $0.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: "`", with: "")
            }
        }
    }
}

/// The built binary, run to its end in a chosen working directory.
enum BinaryCommand {
    static func run(_ arguments: [String], environment: [String: String], directory: URL) async throws -> Int32? {
        guard FileManager.default.isExecutableFile(atPath: SubreconBinary.path) else { throw SubreconBinary.Missing() }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: SubreconBinary.path)
        process.arguments = arguments
        process.currentDirectoryURL = directory
        var env = environment
        env["PATH"] = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        process.environment = env
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        return try await SubreconBinary.wait(process, limit: .seconds(60))
    }

    static func help(_ command: [String]) throws -> String {
        guard let text = try HelpText.of(binary: SubreconBinary.path, command) else { throw SubreconBinary.Missing() }
        return text
    }
}
